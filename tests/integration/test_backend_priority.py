"""A local PostgreSQL backend takes the CPU priority of the thread that checks its connection out
(issue 15: learning's statements must not run at normal priority in a backend serving competes
with). Reads the kernel's view of the backend process, so the test fails if nothing was applied.

The backend's owner is another account (the embedded server's), so this needs CAP_SYS_NICE, as
the project's tests and the embedded stack have (they run as root, as CI does). What happens
without it, and how a backend is recognised, is unit-tested (tests/unit/test_backend_priority.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, text

from services.common import backend_priority
from services.common.backend_priority import BackendPriority
from services.common.db import make_engine
from services.common.priority import LearningPriority, idle_backends_start, loop_executor, lower_thread

pytestmark = pytest.mark.integration


@pytest.fixture
def engine(new_database: Callable[[str], str]) -> Iterator[Engine]:
    engine = make_engine(new_database("backend_priority"), pool_size=1)
    engine.pool._max_overflow = 0  # type: ignore[attr-defined]  # one connection: every checkout is the same backend
    yield engine
    engine.dispose()


@pytest.fixture
def learning_backends() -> Iterator[Callable[[str], None]]:
    """Configure the process as a service's composition root does, from MEMLOOP_LEARNING_BACKENDS;
    the module's default (`nice`) is restored afterwards, whatever the test set."""

    def configure(setting: str) -> None:
        idle_backends_start(LearningPriority.from_env({"MEMLOOP_LEARNING_BACKENDS": setting}))

    yield configure
    backend_priority.lowered_backends_run("nice")


def _backend(engine: Engine) -> tuple[int, int]:
    with engine.connect() as connection:
        pid = int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())
    return pid, os.sched_getscheduler(pid)


def _in_idle_thread(work: Callable[[], tuple[int, int]]) -> tuple[int, int]:
    result: list[tuple[int, int]] = []

    def run() -> None:
        lower_thread()
        result.append(work())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result[0]


def test_an_idle_thread_gets_an_idle_backend_and_a_normal_thread_gets_it_back(
    engine: Engine, learning_backends: Callable[[str], None]
) -> None:
    learning_backends("idle")
    pid, policy = _backend(engine)
    assert policy == os.SCHED_OTHER
    idle_pid, idle_policy = _in_idle_thread(lambda: _backend(engine))
    assert idle_pid == pid, "the pool of one handed out another connection"
    assert idle_policy == os.SCHED_IDLE
    again_pid, again_policy = _backend(engine)
    assert again_pid == pid
    assert again_policy == os.SCHED_OTHER


def test_by_default_an_idle_threads_backend_runs_at_nice_19_and_a_normal_thread_gets_it_back(
    engine: Engine, learning_backends: Callable[[str], None]
) -> None:
    """MEMLOOP_LEARNING_BACKENDS unset (`nice`, the default): a learning backend may hold a lock serving's
    backends wait for, so it runs SCHED_OTHER at nice 19, ahead of learning's SCHED_IDLE threads."""
    learning_backends("idle")
    idle_backends_start(LearningPriority.from_env({}))
    pid, _ = _backend(engine)
    lowered_pid, lowered_policy = _in_idle_thread(lambda: _backend(engine))
    assert lowered_pid == pid, "the pool of one handed out another connection"
    assert (lowered_policy, os.getpriority(os.PRIO_PROCESS, pid)) == (os.SCHED_OTHER, 19)
    assert _backend(engine)[1] == os.SCHED_OTHER and os.getpriority(os.PRIO_PROCESS, pid) == 0


def test_a_pid_that_is_not_this_connections_backend_is_never_recognised(engine: Engine) -> None:
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        found = BackendPriority.of(raw)  # type: ignore[arg-type]
        pid = int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())
    assert found is not None and found.pid == pid
    # Another backend's pid with this connection's endpoint, or this pid with another endpoint: no.
    assert not backend_priority.is_local_backend(os.getpid(), "(5432)")
    assert not backend_priority.is_local_backend(pid, "(1)")


def test_a_loop_executor_thread_stays_normal_while_its_backend_runs_idle(engine: Engine) -> None:
    """Serving's pool for the loop's calls: the Python thread is never SCHED_IDLE (it could be parked
    holding the GIL), yet the SQL it sends runs at idle priority in its backend."""
    pid, _ = _backend(engine)
    executor = loop_executor(LearningPriority("idle", backends="idle"), workers=1, name="t-loop")
    try:
        thread_policy, (loop_pid, loop_policy) = executor.submit(
            lambda: (os.sched_getscheduler(0), _backend(engine))
        ).result()
    finally:
        executor.shutdown()
    assert thread_policy == os.SCHED_OTHER
    assert loop_pid == pid, "the pool of one handed out another connection"
    assert loop_policy == os.SCHED_IDLE
    assert _backend(engine)[1] == os.SCHED_OTHER, "a normal thread's checkout did not take the backend back"
