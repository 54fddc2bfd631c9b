"""A PostgreSQL backend on this host runs at the CPU priority of the thread that is using it.

Lowering the learning threads (`services.common.priority`) is not enough on one machine: every
statement they send is executed by a PostgreSQL backend process, and that process ran at normal
priority, competing for the cores with serving's own backend. The README's profile of serving's
p99 with the loop running showed exactly that: memory's backends used 1.9 CPU-s in a 20 s
window while serving's requests waited for a core. So each pooled connection remembers its
backend's pid and, when a thread checks it out, gives the backend that thread's scheduling
policy and nice value: ingestion's idle threads get idle backends, retrieval's and serving's
threads get normal ones, and a connection that moves between them follows.

This only works where the database runs on the same host and the process may change another
account's priority (CAP_SYS_NICE: root, or the same account with a raised RLIMIT_NICE for the way
back up). Anywhere else (a managed database, a container without the capability) the first
refusal turns it off for that backend, logged once: priority is an optimisation, never a reason
not to serve. The backend is recognised by its process title, which names the client's address
and port (`postgres: user db 127.0.0.1(43210) idle`), so a pid that happens to exist here but
belongs to another host's server is never touched.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

_log = logging.getLogger(__name__)
_refusal_logged = False
_IDLE_BACKEND_NICE = 19
_thread_wants = threading.local()
_lowered_as = "nice"
"""What a lowered thread's backends get: `nice` (SCHED_OTHER at nice 19) or `idle` (SCHED_IDLE).
Set once by the process's composition root (MEMLOOP_LEARNING_BACKENDS, `priority.LearningPriority`)."""


def lowered_backends_run(kind: str) -> None:
    """`idle`: a lowered thread's backends run SCHED_IDLE, as the thread does. `nice`: SCHED_OTHER at
    nice 19. A backend may hold a lock that serving's backends wait for (WAL insertion or flush,
    a buffer's content lock); parked at SCHED_IDLE among learning's busy threads, it holds it
    until it next gets a core. At nice 19 it preempts those idle threads and still yields to
    serving's by weight."""
    global _lowered_as
    if kind not in ("idle", "nice"):
        raise ValueError(f"lowered backends run 'idle' or 'nice', not {kind!r}")
    _lowered_as = kind


class _PgConnInfo(Protocol):
    @property
    def backend_pid(self) -> int: ...


class PsycopgConnection(Protocol):
    """What is read of a psycopg 3 connection (sync or async): its backend pid and its socket."""

    @property
    def info(self) -> _PgConnInfo: ...

    @property
    def pgconn(self) -> Any: ...


def thread_priority() -> tuple[int, int]:
    """What the calling thread's backends get: its own (scheduling policy, nice value), both per
    thread on Linux, unless the thread asked for idle backends (`idle_backends_for_this_thread`)."""
    wanted: tuple[int, int] | None = getattr(_thread_wants, "priority", None)
    if wanted is None:
        wanted = os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)
    idle = getattr(os, "SCHED_IDLE", None)
    if _lowered_as == "nice" and idle is not None and wanted[0] == idle:
        return os.SCHED_OTHER, _IDLE_BACKEND_NICE
    return wanted


def idle_backends_for_this_thread() -> None:
    """The backends this thread uses run idle while the thread itself stays at normal priority.

    For a thread that shares its Python process with latency-critical threads: a SCHED_IDLE thread
    holding the GIL when the kernel parks it keeps every other thread of the process waiting until
    it next gets a core (priority inversion on the GIL; the README's "GIL" note measures it). Its
    SQL runs in another process, where lowering it costs that process nothing."""
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        _thread_wants.priority = (idle, _IDLE_BACKEND_NICE)


@dataclass
class BackendPriority:
    """One local backend process, and the (policy, nice) last given to it."""

    pid: int
    applied: tuple[int, int] | None = None
    enabled: bool = True

    @classmethod
    def of(cls, connection: PsycopgConnection, proc: Path = Path("/proc")) -> BackendPriority | None:
        """The connection's backend if it runs on this host, else None."""
        if not hasattr(os, "sched_setscheduler"):
            return None
        try:
            pid = int(connection.info.backend_pid)
            client = _client_endpoint(int(connection.pgconn.socket))
        except (OSError, ValueError, AttributeError):
            return None
        return cls(pid) if is_local_backend(pid, client, proc) else None

    def follow(self) -> None:
        """Give the backend the calling thread's priority, if that changed since the last call."""
        if not self.enabled:
            return
        wanted = thread_priority()
        if wanted == self.applied:
            return
        policy, nice = wanted
        try:
            os.sched_setscheduler(self.pid, policy, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, self.pid, nice)
        except OSError as exc:
            self.enabled = False
            _log_refusal(self.pid, exc)
            return
        self.applied = wanted


def is_local_backend(pid: int, client: str | None, proc: Path = Path("/proc")) -> bool:
    """Whether `pid` is a PostgreSQL backend on this host serving the client endpoint `client`
    (`"(port)"` for TCP, after the client's address or host name; `"[local]"` for a Unix socket),
    from its process title."""
    if client is None:
        return False
    try:
        title = (proc / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    words = title.split()
    return bool(words) and words[0] == "postgres:" and any(w == client or w.endswith(client) for w in words[1:])


def _client_endpoint(fd: int) -> str | None:
    """How the server's process title names this end of the connection's socket."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        if sock.family == socket.AF_UNIX:
            return "[local]"
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        return f"({sock.getsockname()[1]})"


def _log_refusal(pid: int, exc: OSError) -> None:
    global _refusal_logged
    if not _refusal_logged:
        _refusal_logged = True
        _log.info("cannot set the priority of database backend %d (%s); backends keep normal priority", pid, exc)
