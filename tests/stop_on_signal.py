"""A pytest plugin: SIGTERM or SIGHUP stops the run the way Ctrl-C does, so nothing it started survives.

Python's default answer to SIGTERM is to die on the spot: no fixture teardown, no atexit hook. A run
stopped by `timeout`, by CI cancelling a job or by a closed terminal then left its stacks behind —
service processes, an embedded PostgreSQL and a nats-server, adopted by init and still holding
ports, cores and disk. Raised as KeyboardInterrupt instead, the signal unwinds the test in
progress, pytest tears every fixture down (session ones too) and reports the run as interrupted,
and `processes`' atexit hook stops any child a fixture did not. SIGKILL cannot be caught; nothing
here helps with it.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

import pytest

STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    # Once is enough: a second signal during teardown must not cut teardown short.
    for stopping in STOPPING_SIGNALS:
        signal.signal(stopping, signal.SIG_IGN)
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Install the handlers (only the main thread may; a plugin loaded elsewhere leaves them be)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOPPING_SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _interrupt)
