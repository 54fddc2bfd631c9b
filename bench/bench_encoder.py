"""The worker's sentence encoder, int8 (the default) against fp32 (the model as shipped), same run.

Two parts:

- **in process** (always): CPU ms per event of the learned extractor on Alice's four e-mails
  (`alice_requests`, the benchmarks' traffic), one event per `extract_many` call as the worker
  runs at 10 req/s, and on the held-out extraction e-mails; rounds alternate fp32 and int8, the
  median is reported. Also how often the heads read a sentence differently at int8 (type and
  intent argmax against fp32, each sentence embedded on its own).
- **stack** (``--stack``): one stack as `memloop up` runs it (MiniLM), rounds alternating learning
  off and the loop with each worker variant (`LOOP_VARIANTS`: fp32 with the old 25 ms batch window,
  int8 with it, int8 with a 150 ms window) at 10 req/s. Per loop round the CPU of every process
  from the first request until memory has processed every event (so a worker that lags is charged
  in full), per event; and serving's p99 against the learning-off rounds.

CPU time (`process_time` / the processes' own counters), so other load counts less than in wall
times; the load average is printed with every part.

    .venv/bin/python -m bench.bench_encoder [--quick] [--stack]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench._harness import Row, alice_requests, load_average, row
from services.common.redaction import RedactionMode, Redactor
from services.common.text_folding import fold_for_matching
from services.serving.domain.model import is_from_owner
from services.worker.domain.extraction import EmailContent, ExtractionInput, authored_sentences

PRECISIONS = ("fp32", "int8")
LOW_RATE = 10.0
OWNER = "alice@acme.example"


def alice_events(count: int) -> list[ExtractionInput]:
    """What the worker extracts from `count` of the benchmarks' Alice requests (redacted as it does)."""
    redactor = Redactor(RedactionMode.THOROUGH)
    events = []
    for i, request in enumerate(alice_requests(count, "bench-encoder")):
        content = request.content
        events.append(
            ExtractionInput(
                event_id=f"e{i}",
                trace_id="0" * 32,
                tenant="acme",
                user=request.user,
                route=request.route,
                tool_outcomes=(),
                email=EmailContent(
                    redactor.redact(content.from_address).text,
                    redactor.redact(content.to_address).text,
                    redactor.redact(content.subject).text,
                    redactor.redact(content.body).text,
                ),
                from_owner=is_from_owner(content.from_address, request.owner_address or OWNER, content.to_address),
            )
        )
    return events


def _held_out(limit: int) -> list[ExtractionInput]:
    """The extraction report's held-out sentences, one e-mail each (two in three with a greeting)."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_sentences.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == "test"][:limit]
    events = []
    for i, r in enumerate(rows):
        owner = r["author"] == "owner"
        body = r["text"] if i % 3 == 0 else f"Hi,\n\n{r['text']}\n\nThanks,\n{'Alice' if owner else 'Bob'}"
        email = EmailContent("[EMAIL@a.example]", "[EMAIL@b.example]", "", body)
        events.append(ExtractionInput(f"h{i}", "0" * 32, "acme", f"u{i}", "assistant.instruction", (), email, owner))
    return events


def _cpu_ms_per_event(extractor: Any, events: Sequence[ExtractionInput]) -> float:
    started = time.process_time()
    for event in events:
        extractor.extract_many([event])
    return (time.process_time() - started) * 1000 / len(events)


def in_process(quick: bool) -> list[Row]:
    import torch

    from services.worker.adapters.sentence_model import MiniLmSentenceEncoder, load_heads
    from services.worker.domain.learned_extraction import LearnedExtractor

    torch.set_num_threads(1)  # MEMLOOP_LEARNING_THREADS' default: the worker's shape
    heads = load_heads()
    encoders = {p: MiniLmSentenceEncoder(precision=p) for p in PRECISIONS}
    extractors = {p: LearnedExtractor(encoders[p], heads) for p in PRECISIONS}
    workloads = {
        "Alice's e-mails": alice_events(8 if quick else 40),
        "held-out e-mails": _held_out(40 if quick else 160),
    }
    rounds = 3 if quick else 5
    print(f"encoder bench, in process (load average {load_average()}):", flush=True)
    rows: list[Row] = []
    for name, events in workloads.items():
        for p in PRECISIONS:
            _cpu_ms_per_event(extractors[p], events[:4])  # warm-up
        times: dict[str, list[float]] = {p: [] for p in PRECISIONS}
        for r in range(rounds):
            for p in PRECISIONS if r % 2 == 0 else reversed(PRECISIONS):
                times[p].append(_cpu_ms_per_event(extractors[p], events))
        fp32, int8 = statistics.median(times["fp32"]), statistics.median(times["int8"])
        print(f"  {name}: CPU ms per event, fp32 {times['fp32']} int8 {times['int8']}", flush=True)
        rows.append(
            row(
                f"worker extractor CPU ms per event, {name}, one event per call: int8 vs fp32 encoder "
                f"(median of {rounds} alternating rounds)",
                round(int8, 1),
                round(fp32, 1),
                round(int8 / fp32, 2),
            )
        )
    texts = [
        fold_for_matching(sentence)
        for event in workloads["held-out e-mails"]
        if event.email is not None
        for sentence, _ in authored_sentences(event.email, event.from_owner)
    ]
    read = {p: heads.predict(np.concatenate([encoders[p].embed([t]) for t in texts])) for p in PRECISIONS}
    same_type = sum(a.type == b.type for a, b in zip(read["fp32"], read["int8"], strict=True)) / len(texts)
    same_intent = sum(a.intent == b.intent for a, b in zip(read["fp32"], read["int8"], strict=True)) / len(texts)
    print(f"  heads' argmax unchanged at int8: type {same_type:.3f}, intent {same_intent:.3f} ({len(texts)} sentences)")
    rows.append(
        row(
            f"held-out sentences the heads read the same at int8 as at fp32 (type / intent, {len(texts)} sentences; "
            "the extraction report's figures: scripts/extraction_report.py --precision)",
            round(same_type, 3),
            round(same_intent, 3),
            None,
        )
    )
    return rows


#: The loop's variants: the worker's environment. "before" is the old default (fp32, 25 ms batch window).
LOOP_VARIANTS: dict[str, dict[str, str]] = {
    "fp32, 25 ms": {"MEMLOOP_WORKER_ENCODER_PRECISION": "fp32", "MEMLOOP_WORKER_BATCH_WAIT_MS": "25"},
    "int8, 25 ms": {"MEMLOOP_WORKER_ENCODER_PRECISION": "int8", "MEMLOOP_WORKER_BATCH_WAIT_MS": "25"},
    "int8, 150 ms": {"MEMLOOP_WORKER_ENCODER_PRECISION": "int8", "MEMLOOP_WORKER_BATCH_WAIT_MS": "150"},
}


def stack_rounds(quick: bool) -> list[Row]:
    """Learning off and each loop variant at 10 req/s on one stack, alternating; CPU per event until drained."""
    from bench._harness import CpuMeter, pct, run_service, running_stack
    from bench.bench_serving import FULL, QUICK, RPC_TIMEOUT, ServingBench

    sizes = QUICK if quick else FULL
    count, rounds = (60, 2) if quick else (200, 3)
    latencies: dict[str, list[float]] = {name: [] for name in ("off", *LOOP_VARIANTS)}
    cpu: dict[str, list[dict[str, float]]] = {name: [] for name in LOOP_VARIANTS}
    with running_stack("serving", "minilm") as stack:
        bench = ServingBench(stack, sizes)
        print(f"encoder bench, stack (load average {load_average()}):", flush=True)
        order = ["off", *LOOP_VARIANTS]
        for r in range(rounds):
            for variant in order if r % 2 == 0 else list(reversed(order)):
                if variant == "off":
                    bench.learning_off()
                    p99 = _measure_off(bench, count)
                    latencies["off"].append(p99)
                    print(f"  round {r} off: p99 {p99:.1f} ms", flush=True)
                    continue
                bench.learning_on()
                run_service(stack, "worker", LOOP_VARIANTS[variant])
                tenant = bench.tenants["loop"]
                channel, stub = bench._serving_stub(tenant)
                try:
                    for request in alice_requests(sizes.warmup, tenant):
                        stub.HandleRequest(request, timeout=RPC_TIMEOUT)
                    bench.learned_expected += sizes.warmup
                    bench.drain(timeout=600)
                    requests = alice_requests(count, tenant)
                    with CpuMeter(stack) as meter:
                        result = _open_loop(stub, requests)
                        bench.learned_expected += len(result.latencies_ms)
                        bench.drain(timeout=600)
                finally:
                    channel.close()
                p99 = pct(result.latencies_ms, 99)
                latencies[variant].append(p99)
                cpu[variant].append({name: 1000 * s / count for name, s in meter.used.items()})
                print(f"  round {r} loop {variant}: p99 {p99:.1f} ms; {meter.describe()}", flush=True)
        load = load_average()
    print(f"  load average at the end {load}", flush=True)

    def cpu_median(variant: str, *names: str) -> float:
        return statistics.median(sum(d.get(n, 0.0) for n in names) for d in cpu[variant])

    before = next(iter(LOOP_VARIANTS))
    rows = []
    for variant in list(LOOP_VARIANTS)[1:]:
        for names in (("worker",), ("memory",), ("worker", "memory")):
            label = " + ".join(names)
            after, base = cpu_median(variant, *names), cpu_median(before, *names)
            rows.append(
                row(
                    f"{label} CPU ms per event @{LOW_RATE:g}/s until drained: worker {variant} vs {before} "
                    f"(median of {rounds} alternating rounds, {count} events each) [load {load}]",
                    round(after, 1),
                    round(base, 1),
                    round(after / base, 2),
                    "≤ 0.5x" if label == "worker + memory" else "",
                    after / base <= 0.5 if label == "worker + memory" else None,
                )
            )
    off = statistics.median(latencies["off"])
    for variant in LOOP_VARIANTS:
        loop = statistics.median(latencies[variant])
        rows.append(
            row(
                f"serving p99 ms @{LOW_RATE:g}/s, loop with worker {variant} vs learning off "
                f"(median of {rounds} rounds' p99)",
                round(loop, 2),
                round(off, 2),
                round(loop / off, 2),
                "≤ 1.10x learning off",
                loop / off <= 1.10,
            )
        )
    return rows


def _open_loop(stub: Any, requests: Sequence[Any]) -> Any:
    """`requests` through serving, open loop at 10 req/s (bench_serving's shape)."""
    from bench._harness import open_loop
    from bench.bench_serving import OPEN_THREADS, RPC_TIMEOUT

    def call(i: int) -> Any:
        return stub.HandleRequest(requests[i], timeout=RPC_TIMEOUT)

    return open_loop(call, len(requests), LOW_RATE, OPEN_THREADS)


def _measure_off(bench: Any, count: int) -> float:
    from bench._harness import pct
    from bench.bench_serving import RPC_TIMEOUT

    channel, stub = bench._serving_stub(bench.tenants["off"])
    try:
        for request in alice_requests(bench.sizes.warmup, bench.tenants["off"]):
            stub.HandleRequest(request, timeout=RPC_TIMEOUT)
        result = _open_loop(stub, alice_requests(count, bench.tenants["off"]))
    finally:
        channel.close()
    return pct(result.latencies_ms, 99)


def run(quick: bool) -> list[Row]:
    return in_process(quick)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer events and rounds")
    parser.add_argument("--stack", action="store_true", help="also the whole stack at 10 req/s")
    args = parser.parse_args()
    rows = in_process(args.quick) + (stack_rounds(args.quick) if args.stack else [])
    for r in rows:
        print(f"{r['figure']}\n  {r['memloop']} vs {r['baseline']}, ratio {r['ratio']}")


if __name__ == "__main__":
    main()
