"""Clustered pipeline throughput: 2 workers + 2 memory replicas against 1 + 1, same machine, same run.

Not a test: prints figures; `run(quick)` returns rows for `bench/run_all.py`. Two clustered stacks
(`services.cli.cluster.ClusterStack`: 3 NATS nodes with the streams at R3, PostgreSQL primary +
streaming standby, one relay, serving, policy), one after the other, differing only in the number of
workers and memory replicas. Each gets a warm-up, then M Alice requests from 8 clients back to back
(bench_pipeline's workload and clock: events/s = M / (processed time of the last - commit time of
the first)). Also measured, for docs/SCALING.md's arithmetic: the whole stack's CPU per event, the
rows written per event in both databases and the primary's WAL bytes per event.

On a 2-core machine the ratio says more about the overhead of more processes than about scale:
every extra process competes for the same two cores.

    .venv/bin/python -m bench.bench_cluster [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from bench._harness import Row, load_average, row, running_stack
from bench.bench_pipeline import PipelineBench
from services.cli.cluster import ClusterShape, ClusterStack

EMBEDDER = "hashing"  # the embedder's cost is bench_pipeline's subject; here it is the topology
QUICK_EVENTS, FULL_EVENTS, WARM_UP = 120, 600, 20
_WRITES = "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables"


@dataclass(frozen=True)
class Measured:
    label: str
    events: int
    events_per_s: float
    cpu_ms_per_event: float
    rows_per_event: float
    wal_bytes_per_event: float
    cpu: str


@contextmanager
def clustered(label: str, workers: int, memory: int) -> Iterator[ClusterStack]:
    shape = ClusterShape(relays=1, workers=workers, memory_replicas=memory)
    with running_stack(
        f"cluster-{label}", EMBEDDER, make=lambda spec: ClusterStack(spec, shape), console=False
    ) as stack:
        assert isinstance(stack, ClusterStack)
        yield stack


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _writes_and_wal(stack: ClusterStack) -> tuple[int, int]:
    """Rows inserted/updated/deleted so far in both databases, and the primary's WAL position in bytes."""
    rows = 0
    for url in (stack.serving_db_url, stack.memory_db_url):
        with psycopg.connect(_libpq(url), autocommit=True) as conn:
            found = conn.execute(_WRITES).fetchone()
            rows += int(found[0]) if found else 0
            wal = conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
    return rows, int(wal[0]) if wal else 0


def _cpu_seconds(stack: ClusterStack) -> float:
    """User+system CPU of every stack process so far: services, both PostgreSQL servers, NATS nodes."""
    import psutil  # type: ignore[import-untyped]

    pids = [h.process.pid for h in stack.services.values() if h.process.is_running]
    for server in (stack.embedded_postgres, stack.standby):
        if server is not None and server.pid is not None:
            pids.append(server.pid)
    if stack.nats_cluster is not None:
        pids += [node.pid for node in stack.nats_cluster.nodes if node.pid is not None]
    total = 0.0
    for pid in pids:
        try:
            process = psutil.Process(pid)
            for one in (process, *process.children(recursive=True)):
                times = one.cpu_times()
                total += float(times.user + times.system)
        except psutil.Error:
            continue
    return total


def measure(label: str, workers: int, memory: int, events: int) -> Measured:
    with clustered(label, workers, memory) as stack:
        bench = PipelineBench(stack, EMBEDDER)
        bench.throughput(WARM_UP)  # connections, JIT-free but cold caches, stream leaders settled
        time.sleep(11.0)
        rows0, wal0 = _writes_and_wal(stack)
        cpu0 = _cpu_seconds(stack)
        measured, _tenant = bench.throughput(events)
        cpu1 = _cpu_seconds(stack)
        time.sleep(11.0)  # an idle backend flushes its table statistics within 10 s
        rows1, wal1 = _writes_and_wal(stack)
    result = Measured(
        label=label,
        events=events,
        events_per_s=measured.events_per_s,
        cpu_ms_per_event=(cpu1 - cpu0) * 1000 / events,
        rows_per_event=(rows1 - rows0) / events,
        wal_bytes_per_event=(wal1 - wal0) / events,
        cpu=measured.cpu,
    )
    print(
        f"  {label}: {result.events_per_s:.1f} events/s; whole stack {result.cpu_ms_per_event:.0f} CPU ms/event,"
        f" {result.rows_per_event:.1f} rows/event, {result.wal_bytes_per_event / 1024:.1f} KiB WAL/event",
        flush=True,
    )
    return result


def run(quick: bool) -> list[Row]:
    events = QUICK_EVENTS if quick else FULL_EVENTS
    print(f"bench_cluster: {events} events per topology, {os.cpu_count()} cores, load {load_average()}", flush=True)
    one = measure("1 worker + 1 memory", 1, 1, events)
    two = measure("2 workers + 2 memory", 2, 2, events)
    ratio = two.events_per_s / one.events_per_s if one.events_per_s else float("nan")
    print(f"  ratio 2+2 / 1+1: {ratio:.2f} (load after: {load_average()})", flush=True)
    return [
        row(
            "cluster pipeline events/s, 2 workers + 2 memory (vs 1 + 1)",
            round(two.events_per_s, 1),
            round(one.events_per_s, 1),
            round(ratio, 2),
        ),
        row(
            "cluster CPU ms per event, whole stack (2+2 vs 1+1)",
            round(two.cpu_ms_per_event, 1),
            round(one.cpu_ms_per_event, 1),
        ),
        row(
            "cluster rows written per event, both databases", round(two.rows_per_event, 1), round(one.rows_per_event, 1)
        ),
        row(
            "cluster WAL KiB per event, primary",
            round(two.wal_bytes_per_event / 1024, 1),
            round(one.wal_bytes_per_event / 1024, 1),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    for figure in run(parser.parse_args().quick):
        print(figure)


if __name__ == "__main__":
    main()
