"""Learning yields to serving (issue 15): ingestion threads run at idle priority, retrieval's do not.

Reads the kernel's view of each thread (its scheduling policy, its nice value from
/proc/self/task/<tid>/stat), so the tests fail if the lowering silently did nothing.
"""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from services.common import backend_priority
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.priority import (
    LearningPriority,
    autogroup_nice,
    background_executor,
    kernel_has_autogroups,
    loop_executor,
    lower_other_process,
    lower_own_autogroup,
    run_in,
)
from services.memory.core.entrypoints import grpc_server as core_rpcs
from services.memory.core.entrypoints import requests
from services.memory.core.service import queries, retrieval


def _nice(tid: int) -> int:
    stat = Path(f"/proc/self/task/{tid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19 of stat: nice


def _lowered(tid: int) -> bool:
    return os.sched_getscheduler(tid) == os.SCHED_IDLE or _nice(tid) == 19


def _thread_state() -> tuple[int, bool]:
    tid = threading.get_native_id()
    return tid, _lowered(tid)


def test_idle_executor_threads_run_at_idle_priority_and_the_caller_does_not() -> None:
    executor = background_executor(LearningPriority("idle"), workers=2, name="t-ingest")
    try:
        tid, lowered = executor.submit(_thread_state).result()
    finally:
        executor.shutdown(wait=True)
    assert tid != threading.get_native_id()
    assert lowered, "the ingestion thread is neither SCHED_IDLE nor nice 19"
    assert not _lowered(threading.get_native_id()), "lowering leaked to the submitting thread"


def test_normal_priority_leaves_threads_alone() -> None:
    executor = background_executor(LearningPriority("normal"), workers=1, name="t-normal")
    try:
        _, lowered = executor.submit(_thread_state).result()
    finally:
        executor.shutdown(wait=True)
    assert not lowered


def test_an_unknown_priority_is_refused_at_start_up() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_LEARNING_PRIORITY"):
        LearningPriority("low")


class _Context:
    def abort(self, code: Any, details: str) -> None:  # pragma: no cover - only on a failure
        raise AssertionError(f"aborted {code}: {details}")


def test_memory_runs_the_workers_calls_in_the_background_and_search_in_the_foreground(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, bool] = {}

    def find_conflicts(*_: Any) -> list[Any]:
        seen["FindConflicts"] = _thread_state()[1]
        return []

    def search_memories(*_: Any) -> list[Any]:
        seen["SearchMemories"] = _thread_state()[1]
        return []

    def processed_events(*_: Any) -> dict[str, Any]:
        seen["BatchGetProcessedEvents"] = _thread_state()[1]
        return {}

    monkeypatch.setattr(core_rpcs, "authorize_tenant", lambda *_, **__: None)
    monkeypatch.setattr(retrieval, "find_conflicts", find_conflicts)
    monkeypatch.setattr(retrieval, "search_memories", search_memories)
    monkeypatch.setattr(queries, "get_processed_events", processed_events)
    monkeypatch.setattr(requests, "search", lambda *_, **__: None)
    monkeypatch.setattr(requests, "candidates", lambda *_: [])

    class _Ports:
        class tuning:
            default_k, max_k = 5, 50

    executor = background_executor(LearningPriority("idle"), workers=1, name="t-memory-ingest")
    try:
        rpcs = core_rpcs.CoreMemoryRpcs(_Ports(), executor)  # type: ignore[arg-type,abstract]
        rpcs.FindConflicts(pb.FindConflictsRequest(tenant="t", user="u"), _Context())  # type: ignore[arg-type]
        rpcs.SearchMemories(pb.SearchMemoriesRequest(tenant="t", user="u", query="q"), _Context())  # type: ignore[arg-type]
        batch = pb.BatchGetProcessedEventsRequest(tenant="t", event_ids=["e"])
        rpcs.BatchGetProcessedEvents(batch, _Context())  # type: ignore[arg-type]
    finally:
        executor.shutdown(wait=True)
    assert seen == {"FindConflicts": True, "SearchMemories": False, "BatchGetProcessedEvents": True}


def test_run_in_runs_the_work_on_an_idle_thread_with_the_callers_context() -> None:
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
    who.set("agent-7")
    executor = background_executor(LearningPriority("idle"), workers=1, name="t-run-in")
    try:
        (tid, lowered), seen = run_in(executor, lambda: (_thread_state(), who.get()))
    finally:
        executor.shutdown(wait=True)
    assert tid != threading.get_native_id() and lowered
    assert seen == "agent-7"
    assert run_in(None, lambda: threading.get_native_id()) == threading.get_native_id()


def test_another_process_is_lowered_thread_by_thread_and_its_new_threads_inherit_it() -> None:
    script = (
        "import threading, time, sys\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "print('ready', flush=True); sys.stdin.readline()\n"
        "t = threading.Thread(target=time.sleep, args=(30,), daemon=True); t.start()\n"
        "print('again', flush=True); time.sleep(30)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None and child.stdin is not None
            assert child.stdout.readline().strip() == "ready"
            before = [int(t) for t in os.listdir(f"/proc/{child.pid}/task")]
            assert lower_other_process(child.pid) == len(before) >= 2
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "again"
            tasks = [int(t) for t in os.listdir(f"/proc/{child.pid}/task")]
            assert len(tasks) > len(before)
            assert all(os.sched_getscheduler(t) == os.SCHED_IDLE for t in tasks)
        finally:
            child.kill()
            child.wait()


def test_a_loop_executor_keeps_its_threads_normal_and_asks_idle_backends() -> None:
    """The thread may hold the GIL, so it is never parked at SCHED_IDLE; what its backends are
    given (`backend_priority.thread_priority`) is idle. The submitting thread is untouched."""
    executor = loop_executor(LearningPriority("idle", backends="idle"), workers=1, name="t-loop")
    try:
        (_, lowered), wanted = executor.submit(lambda: (_thread_state(), backend_priority.thread_priority())).result()
    finally:
        executor.shutdown(wait=True)
    assert not lowered
    assert wanted == (os.SCHED_IDLE, 19)
    assert backend_priority.thread_priority() == (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))


def test_a_normal_loop_executor_asks_nothing_of_its_backends() -> None:
    executor = loop_executor(LearningPriority("normal"), workers=1, name="t-loop-normal")
    try:
        wanted = executor.submit(backend_priority.thread_priority).result()
    finally:
        executor.shutdown(wait=True)
    assert wanted == (os.SCHED_OTHER, 0)


_SLEEPER = "import sys; print('ready', flush=True); sys.stdin.readline()"


def _sleeper(*, own_session: bool) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", _SLEEPER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=own_session,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


def test_a_process_leading_its_own_session_gets_its_autogroup_lowered() -> None:
    """Threads' SCHED_IDLE only ranks them inside their session's group: a service started in its
    own session (as the launchers start every service) must lower the group itself."""
    mine = autogroup_nice(os.getpid())
    with _sleeper(own_session=True) as child:
        lower_other_process(child.pid)
        if not kernel_has_autogroups():  # nothing to lower, and nothing pretends it was
            assert not lower_own_autogroup(child.pid)
            assert autogroup_nice(child.pid) is None
        else:
            assert autogroup_nice(child.pid) == 19
            assert autogroup_nice(os.getpid()) == mine  # ours is another group, untouched
        child.kill()


def test_a_process_sharing_its_session_leaves_the_group_alone() -> None:
    """The group is the session's: lowering it from a member would lower its siblings (here: us)."""
    mine = autogroup_nice(os.getpid())
    with _sleeper(own_session=False) as child:
        assert not lower_own_autogroup(child.pid)
        assert autogroup_nice(child.pid) == mine
        assert autogroup_nice(os.getpid()) == mine
        child.kill()


def test_the_group_is_lowered_by_the_last_start_hook_not_before() -> None:
    """lower_process (at build time) leaves the group alone, so a start-up that loads torch is not
    starved; the start hook lowers it; a process at `normal` priority never lowers it."""
    script = (
        "import os, sys\n"
        "from services.common.priority import LearningPriority, lower_group_once_started, lower_process\n"
        "def nice():\n"
        "    path = '/proc/self/autogroup'\n"
        "    return open(path).read().split()[-1] if os.path.exists(path) else 'none'\n"
        "priority = LearningPriority(sys.argv[1])\n"
        "lower_process(priority)\n"
        "built = nice()\n"
        "lower_group_once_started(priority)()\n"
        "print(built, nice())\n"
    )
    has_groups = kernel_has_autogroups()
    for mode, expected in (("idle", "0 19"), ("normal", "0 0")):
        done = subprocess.run(
            [sys.executable, "-c", script, mode], capture_output=True, text=True, start_new_session=True, check=True
        )
        assert done.stdout.strip() == (expected if has_groups else "none none"), done.stderr


def test_memorys_index_catch_up_thread_stays_normal_and_asks_idle_backends() -> None:
    """The catch-up thread takes the index's exclusive lock and the GIL every poll: at SCHED_IDLE
    the kernel parked it holding them and SearchMemories waited (issue 15). Its SQL still runs on
    idle backends."""
    from services.memory.bootstrap import replica_sync

    seen: list[tuple[bool, tuple[int, int]]] = []
    polled = threading.Event()

    class _Sync:
        replica_id = "r1"
        watermark = 0

        def catch_up(self) -> int:
            seen.append((_thread_state()[1], backend_priority.thread_priority()))
            polled.set()
            return 0

        def persist(self) -> bool:
            return False

    replica = replica_sync(_Sync(), 0.01, 3600.0, LearningPriority("idle", backends="idle"))  # type: ignore[arg-type]
    replica.start()
    try:
        assert polled.wait(10.0), "the catch-up thread never polled"
    finally:
        replica.stop()
    lowered, wanted = seen[0]
    assert not lowered, "the catch-up thread runs at SCHED_IDLE (or nice 19)"
    assert wanted == (os.SCHED_IDLE, 19)


@pytest.mark.parametrize("backends, expected", [("idle", (os.SCHED_IDLE, None)), ("nice", (os.SCHED_OTHER, 19))])
def test_a_lowered_threads_backends_run_as_the_setting_says(
    monkeypatch: pytest.MonkeyPatch, backends: str, expected: tuple[int, int | None]
) -> None:
    """MEMLOOP_LEARNING_BACKENDS=nice: an idle thread's backends (which may hold a lock serving's
    wait for) run SCHED_OTHER at nice 19, whether the thread itself is idle (an ingestion pool) or
    keeps normal priority and only asks idle backends (a loop pool)."""
    monkeypatch.setattr(backend_priority, "_lowered_as", "idle")  # restored after the test
    priority = LearningPriority.from_env({"MEMLOOP_LEARNING_BACKENDS": backends})
    for make in (background_executor, loop_executor):
        executor = make(priority, workers=1, name="t-backends")
        try:
            wanted = executor.submit(backend_priority.thread_priority).result()
        finally:
            executor.shutdown(wait=True)
        policy, nice = expected  # SCHED_IDLE ignores nice: only the policy is asserted there
        assert wanted[0] == policy and (nice is None or wanted[1] == nice), make.__name__
    assert backend_priority.thread_priority() == (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))


def test_an_unknown_backend_priority_is_refused_by_name() -> None:
    with pytest.raises(SystemExit, match="MEMLOOP_LEARNING_BACKENDS"):
        LearningPriority.from_env({"MEMLOOP_LEARNING_BACKENDS": "low"})
    assert LearningPriority.from_env({}).backends == "nice"
