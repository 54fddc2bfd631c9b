"""Where the launchers put a service: in their own session (one scheduling group on a kernel with
autogroups, so a learning thread's SCHED_IDLE yields to serving's across processes), leading its
own process group (so `signal_group` reaches its children and a terminal's Ctrl-C does not)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from services.common.infra.processes import forget_child, signal_group, spawn

_SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


@pytest.mark.parametrize("own_session", [False, True])
def test_a_spawned_service_leads_its_process_group_and_shares_the_session_unless_told(
    tmp_path: Path, own_session: bool
) -> None:
    child = spawn(_SLEEP, env=os.environ, log_path=tmp_path / "child.log", own_session=own_session)
    try:
        assert os.getpgid(child.pid) == child.pid
        if own_session:
            assert os.getsid(child.pid) == child.pid
        else:
            assert os.getsid(child.pid) == os.getsid(0)
            assert os.getpgid(child.pid) != os.getpgid(0)
        signal_group(child, signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        forget_child(child)
