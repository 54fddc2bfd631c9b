"""Pipeline throughput: learning events/s from serving's commit to memory's processed record, next to
the raw rate of the embedder alone on the same texts; and commit→processed lag at a sustainable rate.

Not a test: prints figures; `run(quick)` returns rows for `bench/run_all.py`. For each embedder
(hashing, then MiniLM) a fresh stack starts (every service its own process, embedded PostgreSQL
with fsync on, embedded nats-server), and in one run on this machine:

1. Throughput: M Alice requests sent as fast as serving takes them (8 clients back to back); the
   loop is done when memory has processed all M (its `processed_events` rows, polled in SQL; then
   confirmed by GetProcessedEvent for every event, whose `process_time` is used). events/s =
   M / (last process_time - first commit_time).
2. Raw embedder: the texts memory embedded for those events (the `memories` rows each event
   created: its STORE decisions), embedded in the benchmark process by the same embedder class,
   (a) one `embed()` call per event, as memory once did inside each ApplyLearning, and (b) all texts
   in batches of 64 — **the baseline of the MiniLM goal** (≥ 0.7x); the hashing goal is 300 events/s;
   and for MiniLM (c) batches of 64 with torch held to one math thread, as memory-ingest runs it
   (reported: it parts what the loop costs from what bounding learning's threads costs).
   Both are reported as events/s (events without a stored text cost the raw embedder nothing),
   as the median of three rounds.
3. Lag: requests at half the measured throughput (open loop, scheduled by the clock) for a fixed
   time; lag = process_time - commit_time per event, p50/p99.

Each window also records CPU seconds and run-queue wait per process. If the goal is missed (full
mode), memory and the worker are profiled with `bench._sampler` in an extra pass.

    .venv/bin/python -m bench.bench_pipeline [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from google.protobuf.timestamp_pb2 import Timestamp

from bench._harness import (
    CpuMeter,
    ProcessedEvents,
    Row,
    alice_requests,
    closed_loop,
    embedded_texts,
    load_average,
    median,
    open_loop,
    pct,
    row,
    run_service,
    running_stack,
    stop_service,
    tenant_token,
)
from bench._sampler import arm, summarise
from services.cli.stack import Stack
from services.common.gen.memloop.v1 import (
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel
from services.memory.core.adapters.embedders import HashingEmbedder, MiniLmEmbedder

GOAL = 0.70
"""Issue 15, MiniLM: events/s at least this share of the raw embedder batched by 64 on the same texts."""
HASHING_GOAL = 300.0
"""Issue 15, hashing embedder: at least this many events/s (its raw embedder is ~100x faster than the
loop, so a ratio to it says nothing; the loop's own per-event cost is what this measures)."""
RAW_ROUNDS = 3
LEARNING_THREADS = 1
"""MEMLOOP_LEARNING_THREADS' default: the math threads memory-ingest's embedder is allowed (issue 15
asks for bounded threads), against the raw baseline's one per core."""
CLIENTS = 8
RPC_TIMEOUT = 60.0


@dataclass(frozen=True)
class Sizes:
    events: dict[str, int]
    lag_seconds: float
    profile_events: int


QUICK = Sizes(events={"hashing": 200, "minilm": 120}, lag_seconds=6.0, profile_events=0)
FULL = Sizes(events={"hashing": 1000, "minilm": 500}, lag_seconds=20.0, profile_events=200)


@dataclass
class Sent:
    """What serving answered: event ids and commit times (epoch seconds)."""

    commit_times: dict[str, float] = field(default_factory=dict)
    serving_seconds: float = 0.0


@dataclass
class Throughput:
    events: int
    events_per_s: float
    serving_per_s: float
    cpu: str
    memory_embedded: dict[str, int] = field(default_factory=dict)
    texts: int = 0
    raw_single: float = 0.0
    raw_batch: float = 0.0
    cpu_ms_per_event: float = 0.0
    """Every stack process's CPU (and the benchmark's clients') over the throughput window, per event."""
    raw_batch_cpu_ms_per_event: float = 0.0
    """The raw embedder's CPU in batches of 64 (all its threads), per event."""
    raw_batch_bounded: float = 0.0
    """The raw embedder in batches of 64 on LEARNING_THREADS math threads, as memory-ingest runs it."""


def _epoch(stamp: Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


def _rounds(values: list[float]) -> str:
    return ", ".join(f"{x:.1f}" for x in values)


def _batches_of_64(embedder: MiniLmEmbedder | HashingEmbedder, texts: list[str], events: int) -> tuple[float, float]:
    """One round of `texts` in batches of 64: events/s, and this process's CPU ms per event."""
    started, cpu_before = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 64):
        embedder.embed(texts[start : start + 64])
    return events / (time.perf_counter() - started), 1000 * (time.process_time() - cpu_before) / events


def _on_learning_threads(embedder: MiniLmEmbedder | HashingEmbedder, texts: list[str], events: int) -> list[float]:
    """Events/s per round of batches of 64 with torch held to LEARNING_THREADS threads, then given its
    threads back.

    Not the goal's baseline (that is the embedder on every core): it separates what the loop costs
    from what bounding learning's threads costs, which the issue asks for too.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(LEARNING_THREADS)
    try:
        return [_batches_of_64(embedder, texts, events)[0] for _ in range(RAW_ROUNDS)]
    finally:
        torch.set_num_threads(threads)


class PipelineBench:
    def __init__(self, stack: Stack, embedder: str) -> None:
        self.stack = stack
        self.embedder = embedder

    def _stubs(
        self, tenant: str
    ) -> tuple[list[Any], serving_service_pb2_grpc.ServingServiceStub, memory_service_pb2_grpc.MemoryServiceStub]:
        token = tenant_token(self.stack, tenant)
        channels = [
            sync_channel(self.stack.services["serving"].target, token, self.stack.tls_files("operator")),
            sync_channel(self.stack.services["memory"].target, token, self.stack.tls_files("operator")),
        ]
        return (
            channels,
            serving_service_pb2_grpc.ServingServiceStub(channels[0]),
            memory_service_pb2_grpc.MemoryServiceStub(channels[1]),
        )

    def send(self, tenant: str, count: int, rate: float | None = None) -> Sent:
        """`count` requests, back to back from 8 clients, or open loop at `rate`."""
        channels, serving, _ = self._stubs(tenant)
        requests = alice_requests(count, tenant, distinct=True)  # no text repeats: no cache hit

        def call(i: int) -> serving_service_pb2.HandleRequestResponse:
            response: serving_service_pb2.HandleRequestResponse = serving.HandleRequest(
                requests[i], timeout=RPC_TIMEOUT
            )
            return response

        try:
            result = closed_loop(call, count, CLIENTS) if rate is None else open_loop(call, count, rate, CLIENTS)
        finally:
            for channel in channels:
                channel.close()
        if result.errors:
            raise RuntimeError(f"{result.errors} of {count} HandleRequest calls failed")
        sent = Sent(serving_seconds=result.seconds)
        for response in result.results:
            sent.commit_times[response.event_id] = _epoch(response.commit_time)
        return sent

    def confirm(self, tenant: str, sent: Sent) -> dict[str, float]:
        """GetProcessedEvent for every event: all processed, and when (epoch seconds)."""
        channels, _, memory = self._stubs(tenant)
        times: dict[str, float] = {}
        try:
            for event_id in sent.commit_times:
                answer = memory.GetProcessedEvent(
                    memory_service_pb2.GetProcessedEventRequest(tenant=tenant, event_id=event_id), timeout=RPC_TIMEOUT
                )
                if not answer.processed:
                    raise RuntimeError(f"event {event_id} not processed although memory's rows say so")
                times[event_id] = _epoch(answer.process_time)
        finally:
            for channel in channels:
                channel.close()
        return times

    def throughput(self, count: int) -> tuple[Throughput, str]:
        tenant = f"bench-pipe-{uuid.uuid4().hex[:8]}"
        watch = ProcessedEvents(self.stack.memory_db_url, tenant)
        embedded_before = embedded_texts(self.stack)
        with CpuMeter(self.stack) as meter:
            sent = self.send(tenant, count)
            watch.wait_for(count, timeout=120 + count)
        embedded = {k: v - embedded_before.get(k, 0.0) for k, v in embedded_texts(self.stack).items()}
        processed = self.confirm(tenant, sent)
        span = max(processed.values()) - min(sent.commit_times.values())
        measured = Throughput(
            events=count,
            events_per_s=count / span,
            serving_per_s=count / sent.serving_seconds,
            cpu=meter.describe(),
            cpu_ms_per_event=1000 * sum(meter.used.values()) / count,
            memory_embedded={k: int(v) for k, v in embedded.items()},
        )
        print(
            f"  {self.embedder}: {count} events, serving took them at {measured.serving_per_s:.0f}/s, "
            f"learned at {measured.events_per_s:.1f}/s (commit of the first → processed of the last {span:.1f} s)",
            flush=True,
        )
        print(f"    {meter.describe()}", flush=True)
        print(f"    memory embedded, by kind: {measured.memory_embedded}", flush=True)
        return measured, tenant

    def texts_by_event(self, tenant: str) -> list[list[str]]:
        """The texts memory embedded, per event (the memories each event's STORE decisions created)."""
        conninfo = self.stack.memory_db_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(conninfo, autocommit=True) as conn:
            rows = conn.execute("SELECT event_id, text FROM memories WHERE tenant = %s", (tenant,)).fetchall()
            events = conn.execute("SELECT event_id FROM processed_events WHERE tenant = %s", (tenant,)).fetchall()
        grouped: dict[str, list[str]] = defaultdict(list)
        for event_id, text in rows:
            grouped[str(event_id)].append(str(text))
        return [sorted(set(grouped.get(str(e), []))) for (e,) in events]

    def raw(self, measured: Throughput, per_event: list[list[str]]) -> None:
        """The embedder alone on the same texts, in this process: per-event calls and batches of 64.

        Each is timed RAW_ROUNDS times and the median round kept: small torch calls on two busy
        cores are very sensitive to other load (one run here fell from 77 to 3 events/s while a
        test suite ran), and one unlucky round must not make the loop look better than it is.
        """
        embedder = MiniLmEmbedder() if self.embedder == "minilm" else HashingEmbedder()
        everything = [text for texts in per_event for text in texts]
        embedder.embed(everything[:16])  # load and warm, as memory has by the time it serves
        singles, batches, batch_cpu = [], [], []
        for _ in range(RAW_ROUNDS):
            started = time.perf_counter()
            for texts in per_event:
                if texts:
                    embedder.embed(texts)
            singles.append(len(per_event) / (time.perf_counter() - started))
            per_s, cpu_ms = _batches_of_64(embedder, everything, len(per_event))
            batches.append(per_s)
            batch_cpu.append(cpu_ms)
        bounded = _on_learning_threads(embedder, everything, len(per_event)) if self.embedder == "minilm" else []
        measured.texts = len(everything)
        measured.raw_single = median(singles)
        measured.raw_batch = median(batches)
        measured.raw_batch_cpu_ms_per_event = median(batch_cpu)
        measured.raw_batch_bounded = median(bounded) if bounded else 0.0
        on_one = f"; batches of 64 on {LEARNING_THREADS} thread {_rounds(bounded)}" if bounded else ""
        print(
            f"  raw {self.embedder}: {len(everything)} texts of {len(per_event)} events, events/s per round: "
            f"per-event calls {_rounds(singles)}; batches of 64 {_rounds(batches)}{on_one} (medians kept)",
            flush=True,
        )

    def lag(self, rate: float, seconds: float) -> list[float]:
        tenant = f"bench-lag-{uuid.uuid4().hex[:8]}"
        count = max(10, int(rate * seconds))
        watch = ProcessedEvents(self.stack.memory_db_url, tenant)
        with CpuMeter(self.stack) as meter:
            sent = self.send(tenant, count, rate=rate)
            watch.wait_for(count, timeout=120 + count)
        processed = self.confirm(tenant, sent)
        lags = [1000 * (processed[e] - sent.commit_times[e]) for e in sent.commit_times]
        print(
            f"  {self.embedder} lag @ {rate:.1f}/s for {seconds:g} s: p50 {pct(lags, 50):.0f} ms, "
            f"p99 {pct(lags, 99):.0f} ms",
            flush=True,
        )
        print(f"    {meter.describe()}", flush=True)
        return lags

    def profile(self, count: int) -> list[str]:
        """Memory's learning process and the worker under the sampling profiler for `count` more events."""
        folder = Path(tempfile.mkdtemp(prefix="memloop-bench-profile-"))
        outs = {name: folder / f"{name}.json" for name in (self.stack.ingest_name("memory"), "worker")}
        for name, out in outs.items():
            run_service(self.stack, name, profile_to=out)
        for out in outs.values():
            arm(out)
        self.throughput(count)
        lines = []
        for name, out in outs.items():
            stop_service(self.stack, name)
            report = json.loads(out.read_text())
            lines += [f"profile of {name} while learning {count} events with {self.embedder}:"]
            lines += summarise(report, top=14, view="busy", contains="services/")
        for line in lines:
            print("  " + line, flush=True)
        return lines


def _embedder_rows(embedder: str, sizes: Sizes, quick: bool) -> tuple[list[Row], Throughput]:
    # The loop's capacity: the throughput phase sends requests as fast as serving takes them, so
    # serving's p99 sits above the worker's back-pressure target and the AIMD limit would hold the
    # worker at one event in flight, by design (learning yields to a saturated serving). That is
    # bench_serving's subject; here the signal is off (measured on: 50.5 events/s, hashing).
    no_pressure = {"MEMLOOP_WORKER_PRESSURE_URLS": ""}
    with running_stack(f"pipeline-{embedder}", embedder, extra_env=no_pressure) as stack:
        bench = PipelineBench(stack, embedder)
        print(f"pipeline bench, {embedder} (load average {load_average()}):", flush=True)
        bench.send(f"bench-warm-{uuid.uuid4().hex[:6]}", 12)  # first calls load models and pools
        measured, tenant = bench.throughput(sizes.events[embedder])
        bench.raw(measured, bench.texts_by_event(tenant))
        rate = max(2.0, round(measured.events_per_s / 2, 1))
        lags = bench.lag(rate, sizes.lag_seconds)
        load = load_average()
        ratio = measured.events_per_s / measured.raw_single
        batch_ratio = measured.events_per_s / measured.raw_batch
        met = measured.events_per_s >= HASHING_GOAL if embedder == "hashing" else batch_ratio >= GOAL
        profile = ["profile skipped in --quick mode"] if quick else []
        if not met and not quick:
            profile = bench.profile(sizes.profile_events)
    detail = {"cpu": measured.cpu, "load_average": load, "texts": measured.texts, "profile": profile}
    embedded = measured.memory_embedded
    rows = [
        row(
            f"pipeline events/s commit→processed, {embedder} ({measured.events} events, {measured.texts} texts "
            f"embedded) vs raw {embedder}, one embed() per event as memory calls it [load {load}]",
            round(measured.events_per_s, 1),
            round(measured.raw_single, 1),
            round(ratio, 3),
            *((f"≥ {HASHING_GOAL:.0f} events/s", met) if embedder == "hashing" else ()),
        )
        | {"detail": detail},
        row(
            f"texts memory embedded per event, {embedder} (FindConflicts {embedded.get('query', 0)} + "
            f"ApplyLearning {embedded.get('document', 0)}) vs texts stored per event (what raw embeds)",
            round(sum(embedded.values()) / measured.events, 2),
            round(measured.texts / measured.events, 2),
            round(sum(embedded.values()) / max(1, measured.texts), 2),
        ),
        row(
            f"pipeline events/s, {embedder}, vs raw {embedder} in batches of 64 (the ceiling if memory batched)",
            round(measured.events_per_s, 1),
            round(measured.raw_batch, 1),
            round(batch_ratio, 3),
            *((f"≥ {GOAL:.0%} of raw batched by 64", met) if embedder != "hashing" else ()),
        ),
        *(
            [
                row(
                    f"pipeline events/s, {embedder}, vs raw {embedder} in batches of 64 on {LEARNING_THREADS} math "
                    "thread, as memory-ingest runs it (MEMLOOP_LEARNING_THREADS): the loop's own cost, without "
                    "the cost of bounding learning's threads",
                    round(measured.events_per_s, 1),
                    round(measured.raw_batch_bounded, 1),
                    round(measured.events_per_s / measured.raw_batch_bounded, 3),
                )
            ]
            if measured.raw_batch_bounded
            else []
        ),
        row(
            f"end-to-end lag p50 / p99 ms commit→processed, {embedder} @ {rate:g}/s (half the measured rate)",
            f"{pct(lags, 50):.0f} / {pct(lags, 99):.0f}",
            None,
        ),
    ]
    return rows, measured


def ceiling_row(hashing: Throughput, minilm: Throughput) -> Row:
    """The MiniLM goal's ceiling on this machine, from the two runs' own CPU figures.

    With every core busy, events/s cannot exceed cores / CPU per event. Take the CPU per event of
    the hashing run (the whole loop: serving, PostgreSQL, NATS, relay, worker, policy, memory, the
    clients; its embedding costs next to nothing) and add memory's MiniLM at the raw embedder's own
    batched-by-64 cost; leave the worker's MiniLM pass out. That is an optimistic bound on the
    MiniLM pipeline, so if it is under the goal, no batching of memory's embedding reaches it: the
    rest of the loop's per-event CPU has to shrink to the figure printed.
    """
    cores = os.cpu_count() or 1
    budget = cores * 1000 / minilm.raw_batch
    ceiling = cores * 1000 / (hashing.cpu_ms_per_event + minilm.raw_batch_cpu_ms_per_event)
    allowed = budget / GOAL - minilm.raw_batch_cpu_ms_per_event
    return row(
        f"MiniLM pipeline ceiling on {cores} cores, every core busy: the loop at the hashing run's CPU "
        f"({hashing.cpu_ms_per_event:.1f} ms/event) + MiniLM batched by 64 "
        f"({minilm.raw_batch_cpu_ms_per_event:.1f} ms/event), the worker's MiniLM free, vs raw MiniLM batched "
        f"by 64; {GOAL:.0%} of it needs the rest of the loop at ≤ {allowed:.1f} ms CPU/event",
        round(ceiling, 1),
        round(minilm.raw_batch, 1),
        round(ceiling / minilm.raw_batch, 3),
    )


def run(quick: bool) -> list[Row]:
    """Both embedders, each on a fresh stack; rows of (figure, memloop, baseline, ratio, goal, met)."""
    sizes = QUICK if quick else FULL
    rows: list[Row] = []
    measured: dict[str, Throughput] = {}
    for embedder in ("hashing", "minilm"):
        embedder_rows, measured[embedder] = _embedder_rows(embedder, sizes, quick)
        rows += embedder_rows
    return [*rows, ceiling_row(measured["hashing"], measured["minilm"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="fewer events, shorter lag window")
    args = parser.parse_args()
    from bench.run_all import print_table

    print_table(run(args.quick))


if __name__ == "__main__":
    main()
