"""Learning yields to serving: idle CPU priority and bounded math threads for background work.

memloop's promise is "answer at once, learn afterwards". On a shared machine that only holds if
the learning path (the worker, and memory's ingestion: embedding, FindConflicts, ApplyLearning,
index catch-up) cannot take the cores a reply needs. Two levers, both set by each service itself
from `MEMLOOP_LEARNING_PRIORITY` (`idle`, the default, or `normal`):

- **CPU priority.** `SCHED_IDLE` where the OS allows it (Linux: runs only when no normal-priority
  thread wants the core), else nice 19. On Linux both are attributes of a *thread* (a task), so
  memory lowers only its ingestion executor's threads and keeps retrieval at normal priority; the
  worker, all background, lowers every thread of its process.
- **The process's autogroup.** With `CONFIG_SCHED_AUTOGROUP` (on in most distribution kernels),
  every session is one scheduling group, and groups share the cores by their own weight first:
  a thread's SCHED_IDLE or nice only ranks it against threads of its *own* session. Until stop
  23 memloop's launchers started each service in its own session, so a SCHED_IDLE worker still
  took its group's share of the cores from serving's session (measured with two idle-policy
  spinners: a normal probe's run-queue wait per iteration went from 3.6 ms alone to 6.9 ms with
  the spinners in their own session, and to 4.4 ms with that session's group at nice 19). The
  launchers now keep every service in their own session (`processes.spawn`), where SCHED_IDLE
  works across processes. A process that leads its own session anyway (started by hand with
  `setsid`, by a supervisor that makes one per child) puts that group at nice 19 once started
  (`lower_group_once_started`); one that shares its session leaves it alone, since the group is
  its siblings' too. Outside the root cgroup (systemd units, containers with their own
  cgroup) the kernel does not use autogroups: there the cgroup's weight is the lever
  (deploy/README.md).
- **Math threads.** torch, OpenMP, MKL and OpenBLAS each default to one thread per core and spin
  while waiting; a background embedder with 2 spinning threads on a 2-core machine occupies both
  cores. `bound_math_threads` caps them (env for the libraries that read it at import, calls for
  the ones already loaded).

Where the OS refuses (non-Linux, seccomp), the functions log and carry on at normal priority:
priority is an optimisation, never a reason not to serve.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, MutableMapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

PRIORITIES = ("idle", "normal")
BACKEND_PRIORITIES = ("idle", "nice")
_IDLE_NICE = 19
_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass(frozen=True)
class LearningPriority:
    """What the background path runs at: `idle` (SCHED_IDLE or nice 19) or `normal`, and how many
    math threads it may use."""

    mode: str = "idle"
    threads: int = 1
    backends: str = "nice"
    """What a lowered thread's PostgreSQL backends run at: `nice` (SCHED_OTHER at nice 19, the
    default: a backend can hold a lock serving's backends wait for, such as the WAL writer's, and
    at nice 19 it is run ahead of learning's idle threads, still behind serving's) or `idle` (its
    own SCHED_IDLE). Measured on one stack at 50 req/s (`bench/bench_serving_ab.py`): serving's
    p99 with the loop was lower with `nice` in every pair of rounds."""

    def __post_init__(self) -> None:
        if self.mode not in PRIORITIES:
            raise SystemExit(f"MEMLOOP_LEARNING_PRIORITY must be one of {PRIORITIES}, not {self.mode!r}")
        if self.backends not in BACKEND_PRIORITIES:
            raise SystemExit(f"MEMLOOP_LEARNING_BACKENDS must be one of {BACKEND_PRIORITIES}, not {self.backends!r}")
        if self.threads < 1:
            raise SystemExit("MEMLOOP_LEARNING_THREADS must be >= 1")

    @property
    def lowered(self) -> bool:
        return self.mode == "idle"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LearningPriority:
        """MEMLOOP_LEARNING_PRIORITY (`idle`, the default, or `normal`), MEMLOOP_LEARNING_THREADS (1)
        and MEMLOOP_LEARNING_BACKENDS (`nice`, the default, or `idle`)."""
        from services.common.settings import env_int, env_str  # settings imports auth; keep this module light

        return cls(
            mode=env_str(env, "MEMLOOP_LEARNING_PRIORITY", "idle").lower(),
            threads=env_int(env, "MEMLOOP_LEARNING_THREADS", 1),
            backends=env_str(env, "MEMLOOP_LEARNING_BACKENDS", "nice").lower(),
        )


def bound_math_threads(threads: int, env: MutableMapping[str, str] | None = None) -> None:
    """Cap OpenMP/MKL/OpenBLAS (via env: read when those libraries load, so call this before
    importing numpy/torch where possible) and torch/faiss if already imported (via their calls)."""
    env = os.environ if env is None else env
    for name in _THREAD_ENV:
        env.setdefault(name, str(threads))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    faiss = sys.modules.get("faiss")
    if faiss is not None:
        faiss.omp_set_num_threads(threads)


def lower_thread(tid: int = 0) -> str:
    """Put one OS thread (`tid` a native thread id; 0 = the calling thread) at idle priority.

    Returns what was applied: "sched_idle", "nice" or "none". On Linux `sched_setscheduler` and
    `setpriority(PRIO_PROCESS, tid)` act on that one task, not the whole process.
    """
    tid = tid or threading.get_native_id()
    setscheduler = getattr(os, "sched_setscheduler", None)
    idle = getattr(os, "SCHED_IDLE", None)
    if setscheduler is not None and idle is not None:
        try:
            setscheduler(tid, idle, os.sched_param(0))
            return "sched_idle"
        except OSError as exc:
            _log.debug("SCHED_IDLE refused for thread %d (%s); trying nice", tid, exc)
    try:
        os.setpriority(os.PRIO_PROCESS, tid, _IDLE_NICE)
        return "nice"
    except (OSError, AttributeError) as exc:
        _log.warning("cannot lower the priority of thread %d (%s); it runs at normal priority", tid, exc)
        return "none"


def autogroup_nice(pid: int = 0) -> int | None:
    """The nice value of `pid`'s autogroup (0 = this process; `/proc/<pid>/autogroup` reads
    '/autogroup-85 nice 0'), None where the kernel has no autogroups."""
    try:
        return int(Path(f"/proc/{pid or os.getpid()}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def kernel_has_autogroups() -> bool:
    """Whether this kernel groups tasks by session. Not `autogroup_nice(self) is not None`: a process
    still in the boot session (a CI runner's, a container's init) sits in the root group, whose
    `/proc/<pid>/autogroup` reads empty although every new session gets a group of its own."""
    return Path("/proc/self/autogroup").exists()


def lower_own_autogroup(pid: int = 0) -> bool:
    """Put the autogroup of `pid` (0 = this process) at nice 19, if `pid` leads its own session.

    The autogroup is the session's, so lowering it from a process that shares its session would
    lower its siblings too (a shell's, or a launcher's): only a session leader may. Returns
    whether it was applied; False where there are no autogroups or the kernel refused.
    """
    pid = pid or os.getpid()
    try:
        if os.getsid(pid) != pid:
            return False
        with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as group:
            group.write(str(_IDLE_NICE))
        return True
    except OSError as exc:
        _log.debug("autogroup of %d not lowered (%s)", pid, exc)
        return False


def lower_process(priority: LearningPriority) -> str:
    """For an all-background process (the worker): every thread it has and will have, and its
    session's scheduling group when the session is its own.

    New threads inherit the creating thread's policy and nice value, so lowering the main thread
    before the others start covers them; threads already running are lowered one by one.
    """
    bound_math_threads(priority.threads)
    if not priority.lowered:
        return "none"
    _lowered_backends(priority)
    applied = lower_thread()
    for tid in task_ids():
        if tid != threading.get_native_id():
            lower_thread(tid)
    _log.info("background process at idle CPU priority (%s), %d math thread(s)", applied, priority.threads)
    return applied


def lower_group_once_started(priority: LearningPriority) -> Callable[[], None]:
    """The last start hook of an all-background process: its autogroup to nice 19 (when it leads
    its session), once it has loaded its model and joined its peers.

    Not earlier: a group at nice 19 on a busy host gets almost no CPU, and a start-up starved that
    way (torch and MiniLM load in seconds of CPU) outlasts any launcher's health deadline. A start is
    rare; what must yield is the steady work that follows."""

    def lower_group() -> None:
        if priority.lowered and lower_own_autogroup():
            _log.info("started: this process's scheduling group (autogroup) now runs at nice %d", _IDLE_NICE)

    return lower_group


def lower_other_process(pid: int) -> int:
    """Every thread of another process at idle priority (the stack's nats-server, which only the
    learning path uses), and its autogroup when it leads its session; threads it starts later
    inherit it. Returns how many threads were lowered."""
    lower_own_autogroup(pid)
    return sum(1 for tid in task_ids(pid) if lower_thread(tid) != "none")


def task_ids(pid: int | str = "self") -> list[int]:
    """The thread ids of `pid` (every thread a per-thread setting must reach); [] once it is gone."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def background_executor(priority: LearningPriority, *, workers: int, name: str) -> ThreadPoolExecutor:
    """A thread pool whose threads lower themselves as they start (when the priority is `idle`).

    Memory submits ingestion here and keeps retrieval on the gRPC server's threads, so the two
    never share a thread and the kernel can prefer retrieval.
    """
    initializer: Callable[[], object] | None = lower_thread if priority.lowered else None
    _lowered_backends(priority)
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name, initializer=initializer)


def idle_backends_start(priority: LearningPriority) -> Callable[[], object]:
    """What a background thread inside a latency-critical process runs first: the thread keeps
    normal priority and only its database backends run idle (when the priority is `idle`).

    Lowering the thread itself would put a thread that may hold the GIL at SCHED_IDLE: parked by
    the kernel while holding it, it stalls the process's agent-facing threads until it next gets a
    core. Memory's index catch-up poller measured it: woken every 2 s, it held SearchMemories calls
    on the large user for tens of milliseconds (sleeping inside numpy's re-rank gather, which
    releases no GIL) on a loaded machine. The Python part of such work is small; its SQL, in
    PostgreSQL's processes, is what can yield without cost to the caller's process.
    """
    from services.common.backend_priority import idle_backends_for_this_thread

    _lowered_backends(priority)
    return idle_backends_for_this_thread if priority.lowered else (lambda: None)


def _lowered_backends(priority: LearningPriority) -> None:
    """Tell the backends' follower what a lowered thread's backends get (the process's one setting)."""
    from services.common.backend_priority import lowered_backends_run

    lowered_backends_run(priority.backends)


def loop_executor(priority: LearningPriority, *, workers: int, name: str) -> ThreadPoolExecutor:
    """A thread pool for the loop's small calls inside a latency-critical process (serving's content
    reads and deletions): its threads start as `idle_backends_start` says."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name, initializer=idle_backends_start(priority))


def run_in(executor: Executor | None, work: Callable[[], _T]) -> _T:
    """Run `work` on `executor` (one of `background_executor`'s) and wait for it; inline if None.

    For a gRPC servicer whose server threads stay at normal priority: the server thread only
    waits, the work runs on an idle thread, and the call's context (principal, trace) travels
    with it."""
    if executor is None:
        return work()
    return executor.submit(contextvars.copy_context().run, work).result()
