"""`python -m services.worker.entrypoints.main`: build the learning worker from its settings and run it."""

from __future__ import annotations

from services.common.app import run
from services.worker.bootstrap import WorkerSettings, build


def main() -> None:
    run(build(WorkerSettings.from_env()))


if __name__ == "__main__":
    main()
