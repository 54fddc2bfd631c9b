"""`python -m services.serving.entrypoints.main`: migrate, serve ServingService, drain on SIGTERM."""

from __future__ import annotations

from services.common import telemetry
from services.common.grpc_server import serve_until_signalled
from services.serving import bootstrap


def main() -> None:
    settings = bootstrap.ServingSettings.from_env()
    telemetry.configure(settings.common)
    app = bootstrap.build(settings)
    serve_until_signalled(settings.common, [app.registration], on_stop=app.close, max_workers=settings.max_workers)


if __name__ == "__main__":
    main()
