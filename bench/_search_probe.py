"""Where a SearchMemories call's time goes, call by call: `python -m bench._search_probe` runs memory's
`main` with its search path's stages timed (wall and the calling thread's CPU, `perf_counter_ns` /
`thread_time_ns`), every garbage collection's pause, and the intervals of memory's background work
(index catch-up, persistence), so that the slowest calls of a bench can be laid against what else
the process did meanwhile. Not a profiler: only the named functions are wrapped (a few
microseconds a call), nothing samples.

Environment: MEMLOOP_BENCH_PROBE_TARGET (the module to run), MEMLOOP_BENCH_PROBE_OUT (JSON, written
at exit and whenever `<out>.dump` appears; `request_dump` asks for it).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import runpy
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_local = threading.local()
_calls: list[dict[str, Any]] = []
_gcs: list[tuple[int, int, int]] = []
_background: list[tuple[str, int, int]] = []
_gc_started: list[int] = [0]


def _run_delay() -> int:
    """This thread's time runnable but not running (waiting for a core), ns: /proc's schedstat."""
    with open("/proc/thread-self/schedstat", "rb") as f:
        return int(f.read().split()[1])


def _stage(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, adding its wall time, the thread's CPU time and its time waiting for a core (the
    rest is sleeping: the GIL, a lock, the database) to the current search's `name` stage."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        record = getattr(_local, "record", None)
        if record is None:
            return fn(*args, **kwargs)
        wall, cpu, queued = time.perf_counter_ns(), time.thread_time_ns(), _run_delay()
        try:
            return fn(*args, **kwargs)
        finally:
            stages = record["stages"]
            w, c, q = stages.get(name, (0, 0, 0))
            stages[name] = (
                w + time.perf_counter_ns() - wall,
                c + time.thread_time_ns() - cpu,
                q + _run_delay() - queued,
            )

    return timed


def _interval(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            _background.append((name, started, time.perf_counter_ns()))

    return timed


def _gc_callback(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter_ns()
    else:
        _gcs.append((_gc_started[0], time.perf_counter_ns(), int(info["generation"])))


def _replace(owner: Any, attribute: str, value: Any) -> None:
    setattr(owner, attribute, value)


def _install() -> None:
    from services.memory.core.adapters import faiss_index, faiss_partition, faiss_quantised, shared_lock
    from services.memory.core.adapters.cache import LruRetrievalCache
    from services.memory.core.adapters.embedders import HashingEmbedder
    from services.memory.core.entrypoints import grpc_server, requests
    from services.memory.core.service import index_sync, retrieval

    search = grpc_server.CoreMemoryRpcs.SearchMemories

    def servicer(self: Any, request: Any, context: Any) -> Any:
        _local.record = record = {"user": request.user, "stages": {}, "start": time.perf_counter_ns()}
        cpu, queued = time.thread_time_ns(), _run_delay()
        usage = resource.getrusage(resource.RUSAGE_THREAD)
        try:
            return search(self, request, context)
        finally:
            after = resource.getrusage(resource.RUSAGE_THREAD)
            record["sys_ms"] = (after.ru_stime - usage.ru_stime) * 1000
            record["faults"] = after.ru_minflt - usage.ru_minflt
            record["switches"] = (after.ru_nvcsw - usage.ru_nvcsw, after.ru_nivcsw - usage.ru_nivcsw)
            record["end"] = time.perf_counter_ns()
            record["cpu"] = time.thread_time_ns() - cpu
            record["queued"] = _run_delay() - queued
            record["thread"] = threading.get_native_id()
            _local.record = None
            _calls.append(record)

    _replace(grpc_server.CoreMemoryRpcs, "SearchMemories", servicer)
    stages: list[tuple[Any, str, str]] = [
        (HashingEmbedder, "embed", "embed"),
        (retrieval, "_confirm", "db_confirm"),
        (grpc_server, "authorize_tenant", "authorize"),
        (requests, "search", "validate"),
        (retrieval, "search_memories", "use_case"),
        (grpc_server, "scored_to_pb", "to_pb"),
        (LruRetrievalCache, "get", "cache"),
        (LruRetrievalCache, "put", "cache"),
        (LruRetrievalCache, "stamp", "cache"),
        (faiss_index.FaissVectorIndex, "search", "index"),
        (faiss_partition.Partition, "_nprobe", "index.quantizer"),
        (faiss_partition, "reranked", "index.codes+rerank"),
        (faiss_quantised.FloatStore, "get", "index.rerank_gather"),
    ]
    for owner, attribute, stage in stages:
        _replace(owner, attribute, _stage(stage, getattr(owner, attribute)))
    _replace(grpc_server, "run_in", _interval("ingest", getattr(grpc_server, "run_in")))  # noqa: B009
    original_shared = shared_lock.SharedLock.shared

    @contextmanager
    def shared(self: Any) -> Iterator[None]:
        record = getattr(_local, "record", None)
        wall = time.perf_counter_ns()
        with original_shared(self):
            if record is not None:
                record["stages"]["index.lock_wait"] = (time.perf_counter_ns() - wall, 0, 0)
            yield

    _replace(shared_lock.SharedLock, "shared", shared)
    for name in ("catch_up", "persist"):
        setattr(index_sync.IndexSynchroniser, name, _interval(name, getattr(index_sync.IndexSynchroniser, name)))
    gc.callbacks.append(_gc_callback)


def dump(out: Path) -> None:
    report = {
        "calls": _calls,
        "gcs": _gcs,
        "background": _background,
        "gc_counts": gc.get_count(),
        "gc_threshold": gc.get_threshold(),
        "gc_tracked": len(gc.get_objects()),
        "gc_frozen": gc.get_freeze_count(),
        "threads": threading.active_count(),
        "native_threads": len(os.listdir("/proc/self/task")),
    }
    partial = out.with_suffix(".tmp")
    partial.write_text(json.dumps(report))
    partial.replace(out)


def _dumper(out: Path) -> None:
    flag = out.with_suffix(".dump")
    while True:
        time.sleep(0.5)
        if flag.exists():
            flag.unlink()
            dump(out)
            out.with_suffix(".dumped").touch()


def request_dump(out: Path, timeout: float = 30.0) -> dict[str, Any]:
    """Ask the probed process for its report now (it keeps running) and read it."""
    done = out.with_suffix(".dumped")
    done.unlink(missing_ok=True)
    out.with_suffix(".dump").touch()
    deadline = time.monotonic() + timeout
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def main() -> None:
    target = os.environ["MEMLOOP_BENCH_PROBE_TARGET"]
    out = Path(os.environ["MEMLOOP_BENCH_PROBE_OUT"])
    _install()
    threading.Thread(target=_dumper, args=(out,), name="bench-probe", daemon=True).start()
    try:
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    finally:
        dump(out)


def breakdown(report: dict[str, Any], user: str, client_ms: list[float], worst: int = 8) -> list[str]:
    """The `worst` slowest calls of `user` (by the client's time; the server's records in the same
    order, the warm-up call first), each with its stages and what overlapped it."""
    calls = [c for c in report["calls"] if c["user"] == user][1:]  # the bench's warm-up call first
    lines = []
    if len(calls) != len(client_ms):
        lines.append(f"(server recorded {len(calls)} calls, client {len(client_ms)}: matched by order)")
    order = sorted(range(min(len(calls), len(client_ms))), key=lambda i: -client_ms[i])[:worst]
    if calls:
        first, last = calls[0]["start"], calls[-1]["end"]
        during = [(n, s, e) for n, s, e in report["background"] if s < last and e > first]
        slow = {i for i in order}
        hit = sum(1 for i in slow if any(s < calls[i]["end"] and e > calls[i]["start"] for _, s, e in during))
        lines.append(
            f"background work during these calls: {len(during)} intervals"
            f" ({', '.join(f'{n} {(e - s) / 1e6:.1f} ms' for n, s, e in during)}); overlapping {hit} of the"
            f" {len(order)} slowest calls"
        )
    for i in order:
        c = calls[i]
        server = (c["end"] - c["start"]) / 1e6
        stages = ", ".join(
            f"{name} {w / 1e6:.2f}" + (f" ({cpu / 1e6:.2f} cpu, {q / 1e6:.2f} queued)" if cpu else "")
            for name, (w, cpu, q) in sorted(c["stages"].items())
        )
        gcs = [(e - s) / 1e6 for s, e, g in report["gcs"] if s < c["end"] and e > c["start"]]
        gc_gens = [g for s, e, g in report["gcs"] if s < c["end"] and e > c["start"]]
        bg = [f"{n} {(e - s) / 1e6:.1f}" for n, s, e in report["background"] if s < c["end"] and e > c["start"]]
        lines.append(
            f"call {i}: client {client_ms[i]:.2f} ms, server {server:.2f} ms (cpu {c['cpu'] / 1e6:.2f},"
            f" sys {c['sys_ms']:.2f}, queued for a core {c['queued'] / 1e6:.2f},"
            f" faults {c['faults']}, switches vol/invol {c['switches']});"
            f" {stages}; gc {[round(g, 1) for g in gcs]} gens {gc_gens}; background {bg}"
        )
    return lines


if __name__ == "__main__":
    main()
