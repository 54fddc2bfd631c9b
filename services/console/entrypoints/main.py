"""`python -m services.console.entrypoints.main`: serve the console until SIGTERM."""

from __future__ import annotations

import uvicorn

from services.common import telemetry
from services.common.settings import CommonSettings
from services.console.bootstrap import build
from services.console.settings import ConsoleSettings


def main() -> None:
    settings = ConsoleSettings.from_env()
    telemetry.configure(CommonSettings.from_env("console"))  # JSON logs with trace ids; spans to the span file
    uvicorn.run(build(settings), host=settings.host, port=settings.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
