"""`python -m services.policy.entrypoints.main`: serve PolicyService until SIGTERM."""

from __future__ import annotations

from services.common.grpc_server import serve_until_signalled
from services.policy.bootstrap import PolicySettings, registrations


def main() -> None:
    settings = PolicySettings.from_env()
    serve_until_signalled(settings.common, registrations(settings))


if __name__ == "__main__":
    main()
