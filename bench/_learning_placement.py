"""Where and when learning runs during a serving A/B window: the what-ifs that move it.

Not a test: `bench.bench_serving_ab`'s variants. Each is a context manager (or a pair of calls)
that leaves every process as it found it: pinned to cores (`learning_pinned`, `split_cores`),
stopped while a measured request is in flight (`learning_gated`), or replaced by a stand-in that
only burns CPU (`burning`, `bench._burner`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from bench._pg_watch import backend_pids
from bench.bench_serving import ServingBench
from services.cli.stack import Stack
from services.common.priority import task_ids

_ALL_CORES = frozenset(os.sched_getaffinity(0))
"""Every core this benchmark may use, read once: a split narrows this process's own affinity."""

LEARNING_PROCESSES = ("worker", "relay", "memory-ingest", "policy", "serving-loop")
LEARNING_BACKENDS = ("memory-ingest", "relay", "serving-loop")


@contextlib.contextmanager
def learning_gated(bench: ServingBench, gate: bool, only: list[int] | None = None) -> Iterator[None]:
    """While inside (when `gate`): the learning processes (or the processes `only`) stopped whenever
    a measured call is in flight, continued when none is (and on the way out)."""
    if not gate:
        yield
        return
    pids = _learning_processes(bench.stack) if only is None else only
    lock = threading.Lock()
    in_flight = 0
    stops = 0

    def signal_all(number: signal.Signals) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, number)

    def wrap(call: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def gated(request: Any) -> Any:
            nonlocal in_flight, stops
            with lock:
                in_flight += 1
                if in_flight == 1:
                    signal_all(signal.SIGSTOP)
                    stops += 1
            try:
                return call(request)
            finally:
                with lock:
                    in_flight -= 1
                    if in_flight == 0:
                        signal_all(signal.SIGCONT)

        return gated

    bench.wrap_call = wrap
    try:
        yield
    finally:
        bench.wrap_call = None
        signal_all(signal.SIGCONT)
        print(f"     gate: {len(pids)} learning processes stopped {stops} times", flush=True)


BURN_MS = 20.0


@contextlib.contextmanager
def burning(kind: str, duty: float) -> Iterator[int]:
    """`bench._burner` running while inside; yields its pid."""
    one_thread = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    process = subprocess.Popen(
        [sys.executable, "-m", "bench._burner", kind, str(duty), str(BURN_MS)],
        env=os.environ | one_thread,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()  # "burning": its imports done, its first burst begun
        yield process.pid
    finally:
        process.kill()
        process.wait()


@contextlib.contextmanager
def learning_pinned(stack: Stack, pin: bool) -> Iterator[None]:
    """While inside (when `pin`): every thread of the learning processes and of learning's database
    backends on the last core (threads started meanwhile inherit their creator's mask); every core
    again after, so the next variant's window starts unpinned."""
    if not pin:
        yield
        return
    _set_learning_cores(stack, {max(_ALL_CORES)})
    try:
        yield
    finally:
        _set_learning_cores(stack, set(_ALL_CORES))


def _serving_side(stack: Stack) -> list[int]:
    """Serving's process, its database backends and this benchmark process (its client threads)."""
    pids = [os.getpid(), stack.services["serving"].process.pid]
    return [pid for pid in pids if pid is not None] + backend_pids(stack, ("serving",))


def _set_cores(pids: list[int], cores: set[int]) -> int:
    """Every thread of `pids` on `cores`; returns how many threads moved."""
    moved = 0
    for pid in pids:
        for task in task_ids(pid):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(task, cores)
                moved += 1
    return moved


def split_cores(stack: Stack) -> None:
    """Serving's side on the first core, learning's on the last (`Variant.split_cores`)."""
    cores = sorted(_ALL_CORES)  # not this process's affinity: the last split narrowed it
    _set_learning_cores(stack, {cores[-1]})
    _set_cores(_serving_side(stack), {cores[0]})


def unsplit_cores(stack: Stack) -> None:
    _set_cores(_serving_side(stack), set(_ALL_CORES))
    _set_learning_cores(stack, set(_ALL_CORES))


def _learning_processes(stack: Stack) -> list[int]:
    """The learning services' processes now running, and the embedded nats-server."""
    pids = [h.process.pid for name, h in stack.services.items() if name in LEARNING_PROCESSES and h.process.is_running]
    nats = stack.embedded_nats
    if nats is not None and nats.pid is not None:
        pids.append(nats.pid)
    return [pid for pid in pids if pid is not None]


def _set_learning_cores(stack: Stack, cores: set[int]) -> None:
    pids = _learning_processes(stack) + backend_pids(stack, LEARNING_BACKENDS)
    pinned = _set_cores(pids, cores)
    print(f"     {pinned} threads of {len(pids)} learning processes and backends on cores {cores}", flush=True)
