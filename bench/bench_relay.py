"""Relay: sustained outbox→PubAck events/s against raw nats-py, and commit→PubAck lag at a fixed rate.

Not a test: prints figures. Everything runs on this machine in one run, so the two sides share
the same PostgreSQL, nats-server and cores:

1. Throughput. Baseline: nats-py `publish_async` of N learning events straight to a fresh stream
   (same payload size, same `Nats-Msg-Id` and `traceparent` headers, same in-flight window) until
   every PubAck is in. memloop: N rows preloaded in serving's outbox, then the relay as its own
   process (`python -m services.relay.entrypoints.main`) drains them; events/s is taken from the
   PubAck times the relay records (first to last), plus the wall time until all are marked. Both
   sides count from their first PubAck to their last, so neither pays for its ramp-up. The relay
   runs at normal CPU priority here, as the baseline does (by default it yields to serving: see
   MEMLOOP_LEARNING_PRIORITY), so the ratio compares the relay's work, not the scheduler's. The
   two sides alternate for ROUNDS rounds (raw, relay, relay, raw, ...) and each figure is the
   median, so a load change on a shared machine does not land on one side only.
2. Lag. Rows are committed one per transaction with `NOTIFY` — exactly the statements serving's
   commit ends with — at a fixed offered rate while the relay runs; lag = PubAck time - commit
   time per row (p50/p99). Baseline: raw publish→PubAck latency at the same rate; and a raw probe at
   20/s during the relay's own phase, whose p99 shows a stall of the server or the host there.

Servers: an embedded PostgreSQL and nats-server under a temporary folder, or the ones named by
MEMLOOP_BENCH_DATABASE_URL (an admin URL) and MEMLOOP_BENCH_NATS_URL. The embedded nats-server
syncs every write (`sync_interval: always`), which bounds both sides equally.

    .venv/bin/python bench/bench_relay.py [--quick]
    .venv/bin/python -m bench.bench_relay --base main --rounds 4 [--profile]   # throughput A/B only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import psycopg
from nats.js import api

from bench._harness import _cpu, load_average
from bench._sampler import arm, summarise
from services.common.auth_keys import SigningKey
from services.common.db import run_migrations
from services.common.infra.nats import EmbeddedNats
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.common.infra.processes import ServiceProcess, free_port
from services.common.nats_connect import connect_nats
from services.relay.bootstrap import libpq_url
from services.serving.adapters.event_codec import encode_event
from services.serving.bootstrap import MIGRATIONS_DIR
from services.serving.domain.model import LearningEventRecord, ToolOutcome

REPO_ROOT = Path(__file__).resolve().parents[1]
WINDOW = 1024
ROUNDS = 4
"""Alternating pairs; with two rounds the "median" is the mean of two noisy numbers on a shared machine."""
THROUGHPUT_GOAL = 0.8
LAG_P99_GOAL_MS = 1000.0


def _event(tenant: str = "acme") -> tuple[str, str, bytes]:
    event_id, trace_id = str(uuid.uuid4()), secrets.token_hex(16)
    record = LearningEventRecord(
        event_id=event_id,
        trace_id=trace_id,
        request_id=f"req-{uuid.uuid4().hex[:12]}",
        tenant=tenant,
        user="alice",
        thread="thr-bob-sync",
        route="calendar.schedule",
        procedure_versions={"schedule_meeting": "3", "reply_style": "7"},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-evt-7781", "Sync with Bob, Tue 10:30"),),
        feedback_ref="",
        content_ref=f"cnt_{uuid.uuid4().hex}",
        owner_address="alice@acme.example",
        commit_time=datetime.now(UTC),
    )
    return event_id, trace_id, encode_event(record)


@contextmanager
def _servers() -> Iterator[tuple[str, str]]:
    url, nats_url = os.environ.get("MEMLOOP_BENCH_DATABASE_URL", ""), os.environ.get("MEMLOOP_BENCH_NATS_URL", "")
    if url and nats_url:
        yield url, nats_url
        return
    root = Path(tempfile.mkdtemp(prefix="memloop-bench-relay-"))
    postgres = EmbeddedPostgres(root / "pg", durable=False, log_path=root / "postgres.log")
    server = EmbeddedNats(root / "nats", log_path=root / "nats.log")
    try:
        postgres.start()
        server.start()
        yield postgres.admin_url, server.url
    finally:
        server.stop()
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


# --- baseline: raw nats-py ------------------------------------------------------------------------


async def _new_stream(nats_url: str, prefix: str) -> None:
    client = await connect_nats(nats_url)
    config = api.StreamConfig(
        name=f"{prefix}_LEARNING".upper(),
        subjects=[f"{prefix}.learning.>"],
        storage=api.StorageType.FILE,
        duplicate_window=3600,
    )
    await client.jetstream().add_stream(config)
    await client.close()


async def _raw_throughput(nats_url: str, count: int) -> float:
    prefix = f"raw{uuid.uuid4().hex[:8]}"
    await _new_stream(nats_url, prefix)
    events = [_event() for _ in range(count)]
    client = await connect_nats(nats_url)
    js = client.jetstream(publish_async_max_pending=WINDOW)
    first_ack: list[float] = []
    for event_id, trace_id, payload in events:
        headers = {"Nats-Msg-Id": event_id, "traceparent": f"00-{trace_id}-{'0' * 15}1-01"}
        ack = await js.publish_async(f"{prefix}.learning.acme", payload, headers=headers)
        if not first_ack:  # one callback in all, so the baseline pays nothing per message for it
            ack.add_done_callback(lambda _: first_ack.append(time.perf_counter()))
    await js.publish_async_completed()
    elapsed = time.perf_counter() - first_ack[0]
    await client.close()
    return (count - 1) / elapsed


async def _raw_lag(nats_url: str, rate: float, seconds: float) -> list[float]:
    prefix = f"rawlag{uuid.uuid4().hex[:8]}"
    await _new_stream(nats_url, prefix)
    client = await connect_nats(nats_url)
    js = client.jetstream()
    lags: list[float] = []

    async def one() -> None:
        event_id, trace_id, payload = _event()
        sent = time.perf_counter()
        headers = {"Nats-Msg-Id": event_id, "traceparent": f"00-{trace_id}-{'0' * 15}1-01"}
        await js.publish(f"{prefix}.learning.acme", payload, headers=headers)
        lags.append((time.perf_counter() - sent) * 1000)

    tasks = []
    start = time.perf_counter()
    for i in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    await client.close()
    return lags


# --- memloop: the relay process -------------------------------------------------------------------


class _Outbox:
    """Serving's schema on a fresh database, written to as the owner (what serving's commit writes)."""

    def __init__(self, admin_url: str) -> None:
        self.url = create_database(admin_url, f"bench_relay_{uuid.uuid4().hex[:8]}")
        run_migrations(self.url, MIGRATIONS_DIR, app_role="memloop_serving_app")
        self.conninfo = libpq_url(self.url)

    def preload(self, count: int) -> None:
        rows = []
        for _ in range(count):
            event_id, trace_id, payload = _event()
            rows.append((event_id, "acme", f"req-{event_id}", trace_id, payload))
        with psycopg.connect(self.conninfo) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO outbox (event_id, tenant, request_id, trace_id, payload) VALUES (%s, %s, %s, %s, %s)", rows
            )

    def commit_at_rate(self, rate: float, seconds: float) -> int:
        """One row per transaction with NOTIFY, paced to `rate` per second; returns rows committed."""
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            start, total = time.perf_counter(), int(rate * seconds)
            for i in range(total):
                time.sleep(max(0.0, start + i / rate - time.perf_counter()))
                event_id, trace_id, payload = _event()
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO outbox (event_id, tenant, request_id, trace_id, payload) "
                        "VALUES (%s, 'acme', %s, %s, %s)",
                        (event_id, f"req-{event_id}", trace_id, payload),
                    )
                    conn.execute("SELECT pg_notify('memloop_outbox', '')")
            return total

    def one(self, sql: str) -> tuple[Any, ...]:
        with psycopg.connect(self.conninfo) as conn:
            row = conn.execute(sql).fetchone()
            assert row is not None
            return tuple(row)

    def wait_published(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.one("SELECT count(*) FROM outbox WHERE published_at IS NULL")[0]:
            if time.monotonic() > deadline:
                raise SystemExit("relay did not drain the outbox in time")
            time.sleep(0.05)


def _relay(
    outbox: _Outbox,
    nats_url: str,
    log: Path,
    extra_env: dict[str, str] | None = None,
    *,
    code: Path | None = None,
    profile_to: Path | None = None,
) -> ServiceProcess:
    """The relay process; `code`: a tree to run it from (an A/B baseline), `profile_to`: run it under
    `bench._sampler` (armed once it is healthy, so its start-up is not in the profile)."""
    prefix = f"rel{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": SigningKey.generate().public_pem(),
        "MEMLOOP_GRPC_PORT": str(port),
        "MEMLOOP_METRICS_PORT": str(free_port()),
        "MEMLOOP_SERVING_DATABASE_URL": outbox.url,
        "MEMLOOP_NATS_URL": nats_url,
        "MEMLOOP_SUBJECT_PREFIX": prefix,
        "MEMLOOP_LEARNING_STREAM": f"{prefix}_LEARNING".upper(),
        "MEMLOOP_RELAY_MAX_IN_FLIGHT": str(WINDOW),
        "MEMLOOP_LOG_LEVEL": "WARNING",
        "MEMLOOP_LEARNING_PRIORITY": "normal",  # the baseline's priority (module docstring)
        **(extra_env or {}),
    }
    module = "services.relay.entrypoints.main"
    if code is not None:
        env["PYTHONPATH"] = str(code)
        env["PYTHONSAFEPATH"] = "1"  # else `python -m` puts the working folder (this checkout) first
    if profile_to is not None:
        env |= {"MEMLOOP_BENCH_PROFILE_TARGET": module, "MEMLOOP_BENCH_PROFILE_OUT": str(profile_to)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(REPO_ROOT)) if p)
        module = "bench._sampler"
    process = ServiceProcess(module, env, log_path=log, name="relay").start()
    process.wait_healthy(port, timeout=60)
    if profile_to is not None:
        arm(profile_to)
    return process


def _relay_throughput(
    admin_url: str,
    nats_url: str,
    count: int,
    log: Path,
    *,
    code: Path | None = None,
    profile_to: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> tuple[float, float, float, float]:
    """(events/s between first and last PubAck, events/s of the wall time including start-up, relay
    CPU ms/event and PostgreSQL CPU ms/event, both from the relay's health to the drain)."""
    outbox = _Outbox(admin_url)
    outbox.preload(count)
    postgres = postgres_pid(outbox.conninfo)
    started = time.perf_counter()
    relay = _relay(outbox, nats_url, log, extra_env, code=code, profile_to=profile_to)
    try:
        relay0, pg0 = _cpu(relay.pid, children=False), _cpu(postgres, children=True)
        done0 = outbox.one("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")[0]
        outbox.wait_published(timeout=300)
        wall = time.perf_counter() - started
        relay_cpu, pg_cpu = _cpu(relay.pid, children=False) - relay0, _cpu(postgres, children=True) - pg0
        span = outbox.one("SELECT EXTRACT(EPOCH FROM max(published_at) - min(published_at)) FROM outbox")[0]
    finally:
        relay.terminate()
    events = max(1, count - int(done0))
    return (count - 1) / float(span), count / wall, 1000 * relay_cpu / events, 1000 * pg_cpu / events


def postgres_pid(conninfo: str) -> int:
    """The postmaster of the server behind `conninfo` (its backends are its children)."""
    with psycopg.connect(conninfo) as conn:  # asked while the backend lives: it exits with the connection
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert backend is not None
        return int(psutil.Process(int(backend[0])).ppid())


PROBE_RATE = 20.0
"""Raw publishes per second on the same nats-server during the relay's lag phase: a stall of the
server or the host (a slow fsync under other processes' writes) shows there too, at the same time.
The separate baseline phase runs earlier and cannot see it; stop 25's 303.9 ms p99 was one."""


def _relay_lag(
    admin_url: str, nats_url: str, rate: float, seconds: float, log: Path
) -> tuple[list[float], list[float]]:
    """(the relay's commit→PubAck lags, a concurrent raw probe's publish→PubAck latencies), in ms."""
    outbox = _Outbox(admin_url)
    relay = _relay(outbox, nats_url, log)
    probe: list[float] = []
    prober = threading.Thread(
        target=lambda: probe.extend(asyncio.run(_raw_lag(nats_url, PROBE_RATE, seconds))), name="lag-probe"
    )
    try:
        prober.start()
        outbox.commit_at_rate(rate, seconds)
        prober.join()
        outbox.wait_published(timeout=120)
        with psycopg.connect(outbox.conninfo) as conn:
            rows = conn.execute("SELECT EXTRACT(EPOCH FROM published_at - created_at) * 1000 FROM outbox").fetchall()
    finally:
        relay.terminate()
    return [float(r[0]) for r in rows], probe


def _list(values: Iterable[float]) -> str:
    return "/".join(f"{v:,.0f}" for v in values)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def run(quick: bool, rounds: int | None = None) -> list[dict[str, Any]]:
    """Measure both figures; rows of (figure, memloop, baseline, ratio, goal, met) for run_all."""
    count, rate, seconds = (5_000, 200.0, 5.0) if quick else (30_000, 500.0, 15.0)
    log = Path(tempfile.mkdtemp(prefix="memloop-bench-relay-logs-")) / "relay.log"
    rounds = max(1, rounds or ROUNDS)
    raws: list[float] = []
    relays: list[tuple[float, float, float, float]] = []
    with _servers() as (admin_url, nats_url):
        for i in range(rounds):
            for side in ("raw", "relay") if i % 2 == 0 else ("relay", "raw"):
                if side == "raw":
                    raws.append(asyncio.run(_raw_throughput(nats_url, count)))
                else:
                    relays.append(_relay_throughput(admin_url, nats_url, count, log))
        raw = statistics.median(raws)
        relay_rate, relay_wall = statistics.median(r[0] for r in relays), statistics.median(r[1] for r in relays)
        raw_lags = asyncio.run(_raw_lag(nats_url, rate, seconds))
        lags, probe = _relay_lag(admin_url, nats_url, rate, seconds, log)
    p50, p99 = _pct(lags, 50), _pct(lags, 99)
    return [
        {
            "figure": f"outbox→PubAck events/s ({count} events, median of {rounds}; relay wall incl. start "
            f"{relay_wall:,.0f}/s; rounds relay {_list(r[0] for r in relays)}, raw {_list(raws)})",
            "memloop": round(relay_rate),
            "baseline": round(raw),
            "ratio": round(relay_rate / raw, 3),
            "goal": f"≥ {THROUGHPUT_GOAL:.0%} of raw nats-py publish_async",
            "met": relay_rate / raw >= THROUGHPUT_GOAL,
        },
        {
            "figure": f"commit→PubAck lag p50 ms @ {rate:g}/s (baseline: raw publish→PubAck)",
            "memloop": round(p50, 2),
            "baseline": round(_pct(raw_lags, 50), 2),
            "ratio": None,
            "goal": "reported",
            "met": None,
        },
        {
            "figure": f"commit→PubAck lag p99 ms @ {rate:g}/s (baseline: raw publish→PubAck; raw at "
            f"{PROBE_RATE:g}/s during the relay's phase: p99 {_pct(probe, 99):.1f}, max {max(probe):.1f} ms)",
            "memloop": round(p99, 2),
            "baseline": round(_pct(raw_lags, 99), 2),
            "ratio": None,
            "goal": f"< {LAG_P99_GOAL_MS:g} ms",
            "met": p99 < LAG_P99_GOAL_MS,
        },
    ]


def compare(base_ref: str, quick: bool, rounds: int, profile: bool, new_env: dict[str, str]) -> None:
    """Throughput of this checkout's relay against `base_ref`'s and raw publish_async, alternating
    (raw, base, new, then reversed) on the same servers; with `profile`, one more round of this
    checkout's relay under `bench._sampler`, and its busiest frames. `new_env`: settings for this
    checkout's relay only (a setting's A/B: `--base HEAD --new-env MEMLOOP_RELAY_BATCH_SIZE=512`)."""
    from bench.bench_pipeline_ab import export  # only this mode needs a baseline tree

    count = 5_000 if quick else 30_000
    base = export(base_ref)
    neutral = Path(tempfile.mkdtemp(prefix="memloop-relay-cwd-"))
    os.chdir(neutral)  # `python -m` puts the cwd first on a relay's sys.path: not this checkout
    log = neutral / "relay.log"
    sides: dict[str, list[float]] = {"raw": [], "base": [], "new": []}
    cpu: dict[str, list[tuple[float, float]]] = {"base": [], "new": []}
    try:
        with _servers() as (admin_url, nats_url):
            print(f"relay throughput, {count} events, base {base_ref} vs this tree {new_env} (load {load_average()})")
            for i in range(rounds):
                for side in ("raw", "base", "new") if i % 2 == 0 else ("new", "base", "raw"):
                    note = ""
                    if side == "raw":
                        rate = asyncio.run(_raw_throughput(nats_url, count))
                    else:
                        code = base if side == "base" else REPO_ROOT
                        env = new_env if side == "new" else None
                        rate, _, relay_ms, pg_ms = _relay_throughput(
                            admin_url, nats_url, count, log, code=code, extra_env=env
                        )
                        cpu[side].append((relay_ms, pg_ms))
                        note = f", relay {relay_ms:.3f} + postgres {pg_ms:.3f} CPU ms/event"
                    sides[side].append(rate)
                    print(f"round {i + 1} {side:>4}: {rate:8,.0f} events/s{note} (load {load_average()})", flush=True)
            raw = statistics.median(sides["raw"])
            print(f"\nmedians of {rounds} rounds (load {load_average()}):")
            for side in ("raw", "base", "new"):
                rate = statistics.median(sides[side])
                use = "".join(
                    f", {what} {statistics.median(c[k] for c in cpu[side]):.3f}"
                    for k, what in enumerate(("relay CPU ms/event", "postgres"))
                    if side in cpu
                )
                print(f"{side:>5} {rate:8,.0f} events/s, of raw {rate / raw:.3f}{use}")
            print(f"new/base {statistics.median(sides['new']) / statistics.median(sides['base']):.3f}")
            if profile:
                out = neutral / "relay-profile.json"
                _relay_throughput(admin_url, nats_url, count, log, profile_to=out, extra_env=new_env)
                report = json.loads(out.read_text())
                print("\n".join(summarise(report, top=25)))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="5k events and 5 s at 200/s instead of 30k and 15 s at 500/s"
    )
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="raw/relay rounds, alternating (median)")
    parser.add_argument("--base", help="git ref: throughput only, this relay against the ref's and raw")
    parser.add_argument("--profile", action="store_true", help="with --base: one more sampled round of this relay")
    parser.add_argument("--new-env", nargs="*", default=[], help="with --base: NAME=VALUE settings of this relay only")
    args = parser.parse_args()
    if args.base:
        compare(args.base, args.quick, args.rounds, args.profile, dict(v.split("=", 1) for v in args.new_env))
        return
    rows = run(args.quick, rounds=args.rounds)
    print(f"{'figure':<78} {'memloop':>10} {'baseline':>10} {'ratio':>7}  {'goal':<40} met")
    for row in rows:
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}"
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        print(f"{row['figure']:<78} {row['memloop']:>10} {row['baseline']:>10} {ratio:>7}  {row['goal']:<40} {met}")
    print(f"relay / raw throughput ratio: {rows[0]['ratio']:.2f} (goal ≥ {THROUGHPUT_GOAL:.2f})")


if __name__ == "__main__":
    main()
