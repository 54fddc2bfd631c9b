"""`python -m services.relay.entrypoints.main`: build the relay from its settings and run it."""

from __future__ import annotations

from services.common.app import run
from services.relay.bootstrap import RelaySettings, build


def main() -> None:
    run(build(RelaySettings.from_env()))


if __name__ == "__main__":
    main()
