"""Pipeline CPU per event, A/B in one run: this checkout against a baseline git ref, alternating rounds.

Not a test: prints figures. Why: on this shared 2-core machine absolute events/s move with other
load by 2x between runs, so a change to the learning path is judged by CPU milliseconds per event
per process (serving, memory, PostgreSQL, worker, policy, relay, NATS), measured on both code
versions in alternating rounds of the same run, medians kept.

Both stacks start once (hashing embedder by default, each on its own embedded PostgreSQL and
nats-server): the baseline's services run the ref's code (`git archive` into a temporary folder,
put first on their PYTHONPATH; the driver works from a neutral folder so `python -m` does not put
this checkout first), this checkout's run its own. Each round sends `--events` Alice requests to
each stack in turn (the order alternates between rounds) and waits until memory has processed
them all; CPU seconds per process over that window / events = ms per event. The idle stack costs
little (its pollers), and it is the same for both.

With `--profile NAMES`, after the rounds each named service of both stacks runs under
`bench._sampler` for one more round, and the busiest services/ frames are printed side by side.

    .venv/bin/python -m bench.bench_pipeline_ab --base main --events 400 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from bench._harness import (
    CpuMeter,
    ProcessedEvents,
    embedded_texts,
    load_average,
    median,
    metric_sum,
    run_service,
    running_stack,
)
from bench._sampler import arm, summarise
from bench.bench_pipeline import PipelineBench
from services.cli.stack import Stack

REPO_ROOT = Path(__file__).resolve().parents[1]
# memory is split (issue 15): `memory` retrieval, `memory-ingest` the learning path; serving too
PROCESSES = ("serving", "serving-loop", "memory", "memory-ingest", "postgres", "worker", "policy", "relay", "nats")


def export(ref: str) -> Path:
    """The ref's tree in a temporary folder (its committed generated stubs included)."""
    folder = Path(tempfile.mkdtemp(prefix="memloop-ab-base-"))
    archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


@contextlib.contextmanager
def stacks(
    base: Path, embedder: str, priority: str, pressure: bool, new_env: dict[str, str]
) -> Iterator[dict[str, Stack]]:
    """`priority`: MEMLOOP_LEARNING_PRIORITY of both stacks. `normal` keeps a machine loaded by others
    from starving the idle-priority learning path into deadline retries, which would be counted as
    CPU per event of whichever variant was starved. Without `pressure` the worker's back-pressure is
    off, as in bench_pipeline's capacity figure: a burst saturates serving, the AIMD limit then holds
    the worker at a few events in flight, and its batches (so its CPU per event) follow the limit's
    history more than the code (stop 25, 300 events a round: 9.2 to 16.5 ms per event in one variant).
    `new_env`: settings of this checkout's stack only (a what-if of a setting, with `--base HEAD`)."""
    env = {"MEMLOOP_LEARNING_PRIORITY": priority}
    if not pressure:
        env["MEMLOOP_WORKER_PRESSURE_URLS"] = ""
    with (
        running_stack("ab-base", embedder, extra_env={**env, "PYTHONPATH": str(base)}) as old,
        running_stack("ab-new", embedder, extra_env={**env, **new_env, "PYTHONPATH": str(REPO_ROOT)}) as new,
    ):
        yield {"base": old, "new": new}


def one_round(stack: Stack, count: int) -> tuple[float, dict[str, float]]:
    """events/s and CPU ms per event by process, for `count` events through the whole loop."""
    bench = PipelineBench(stack, "ab")
    tenant = f"bench-ab-{uuid.uuid4().hex[:8]}"
    watch = ProcessedEvents(stack.memory_db_url, tenant)
    embedded_before = embedded_texts(stack)
    batches_before = worker_batches(stack)
    with CpuMeter(stack) as meter:
        sent = bench.send(tenant, count)
        watch.wait_for(count, timeout=120 + count)
    processed = bench.confirm(tenant, sent)
    span = max(processed.values()) - min(sent.commit_times.values())
    per_event = {name: 1000 * meter.used.get(name, 0.0) / count for name in PROCESSES}
    per_event["total"] = sum(per_event.values())
    # what memory's model ran on, per event (FindConflicts' queries and stores' documents together)
    embedded = embedded_texts(stack)
    per_event["texts"] = sum(embedded.values()) - sum(embedded_before.values())
    per_event["texts"] /= count
    # the worker's mean batch: its fixed costs per batch are a large part of everyone's CPU per event
    batches = worker_batches(stack) - batches_before
    per_event["batch"] = count / batches if batches else 0.0
    return count / span, per_event


def worker_batches(stack: Stack) -> float:
    """Batches the worker has handled (`memloop_worker_batch_size_count`)."""
    return metric_sum(stack, "worker", "memloop_worker_batch_size_count")


def profile(stacks_: dict[str, Stack], names: list[str], count: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="memloop-ab-profile-"))
    for variant, stack in stacks_.items():
        outs = {name: folder / f"{variant}-{name}.json" for name in names}
        for name, out in outs.items():
            run_service(stack, name, profile_to=out)
        for out in outs.values():
            arm(out)
        rate, cpu = one_round(stack, count)
        print(f"profiled round, {variant}: {rate:.1f} ev/s, total {cpu['total']:.2f} ms/event", flush=True)
        for name, out in outs.items():
            stack.services[name].process.terminate(timeout=5.0)
            report = json.loads(out.read_text())
            print(f"--- {variant} {name} ---")
            for line in summarise(report, top=25, view="busy", contains="services/"):
                print("  " + line)
    shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--base", default="main", help="git ref of the baseline (default main)")
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--priority", default="normal", choices=["normal", "idle"], help="learning path priority")
    parser.add_argument("--pressure", action="store_true", help="keep the worker's back-pressure on")
    parser.add_argument("--env", nargs="*", default=[], help="KEY=VALUE settings of this checkout's stack only")
    parser.add_argument("--profile", nargs="*", default=[], help="services to sample after the rounds")
    parser.add_argument("--profile-events", type=int, default=300)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop both stacks on `kill`, not just this process
    base = export(args.base)
    neutral = Path(tempfile.mkdtemp(prefix="memloop-ab-cwd-"))
    os.chdir(neutral)  # `python -m` puts the cwd first on a service's sys.path: not this checkout
    try:
        run(args, base)
    finally:
        for folder in (base, neutral):
            shutil.rmtree(folder, ignore_errors=True)


def run(args: argparse.Namespace, base: Path) -> None:
    new_env = dict(item.split("=", 1) for item in args.env)
    with stacks(base, args.embedder, args.priority, args.pressure, new_env) as both:
        print(
            f"pipeline A/B, {args.embedder}, learning priority {args.priority}, "
            f"back-pressure {'on' if args.pressure else 'off'}, base {args.base} vs this checkout {new_env or ''} "
            f"(load {load_average()})",
            flush=True,
        )
        for stack in both.values():  # first calls load models and pools
            warm = f"bench-warm-{uuid.uuid4().hex[:6]}"
            PipelineBench(stack, "ab").send(warm, 12)
            ProcessedEvents(stack.memory_db_url, warm).wait_for(12, timeout=120)
        results: dict[str, list[tuple[float, dict[str, float]]]] = {"base": [], "new": []}
        for i in range(args.rounds):
            order = ["base", "new"] if i % 2 == 0 else ["new", "base"]
            for variant in order:
                rate, cpu = one_round(both[variant], args.events)
                results[variant].append((rate, cpu))
                figures = ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
                load = load_average()
                print(f"round {i + 1} {variant}: {rate:.1f} ev/s; CPU ms/event: {figures} (load {load})", flush=True)
        print(f"\nmedians of {args.rounds} rounds, {args.events} events each (load {load_average()}):")
        print(f"{'':>13} {'base':>8} {'new':>8} {'new/base':>8}")
        rates = {v: median([r for r, _ in results[v]]) for v in results}
        print(f"{'ev/s':>13} {rates['base']:8.1f} {rates['new']:8.1f} {rates['new'] / rates['base']:8.2f}")
        for name in (*PROCESSES, "total", "texts", "batch"):
            b = median([c[name] for _, c in results["base"]])
            n = median([c[name] for _, c in results["new"]])
            print(f"{name:>13} {b:8.2f} {n:8.2f} {n / b if b else 0:8.2f}")
        if args.profile:
            profile(both, args.profile, args.profile_events)


if __name__ == "__main__":
    main()
