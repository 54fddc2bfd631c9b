"""`python -m services.memory.entrypoints.main`: build the memory replica from its settings and run it."""

from __future__ import annotations

from services.common.app import run
from services.memory.bootstrap import build
from services.memory.settings import MemorySettings


def main() -> None:
    run(build(MemorySettings.from_env()))


if __name__ == "__main__":
    main()
