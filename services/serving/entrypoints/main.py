"""`python -m services.serving.entrypoints.main`: build the serving service from its settings and run it."""

from __future__ import annotations

from services.common.app import run
from services.serving.bootstrap import ServingSettings, build


def main() -> None:
    run(build(ServingSettings.from_env()))


if __name__ == "__main__":
    main()
