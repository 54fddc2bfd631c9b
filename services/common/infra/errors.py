"""The one error the infrastructure helpers raise, so a launcher can print one line and stop."""

from __future__ import annotations

from pathlib import Path


class InfraError(Exception):
    """A server or process could not be started, reached or stopped.

    `reason` is one line saying which and why (it is what a launcher prints); the tail of the
    server's log, when there is one, follows it in `str()` so a test failure shows the cause.
    """

    def __init__(self, reason: str, *, log_path: Path | None = None, log_tail: str = "") -> None:
        self.reason = reason
        self.log_path = log_path
        self.log_tail = log_tail
        super().__init__(reason)

    def __str__(self) -> str:
        if not self.log_tail:
            return self.reason
        where = f" ({self.log_path})" if self.log_path is not None else ""
        return f"{self.reason}\n--- last lines of the log{where} ---\n{self.log_tail}"
