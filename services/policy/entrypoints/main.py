"""`python -m services.policy.entrypoints.main`: build the policy service from its settings and run it."""

from __future__ import annotations

from services.common.app import run
from services.policy.bootstrap import PolicySettings, build


def main() -> None:
    run(build(PolicySettings.from_env()))


if __name__ == "__main__":
    main()
