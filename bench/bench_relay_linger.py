"""Relay CPU per event at serving's steady pace: the claim linger (MEMLOOP_RELAY_CLAIM_LINGER_MS)
off against on, alternating rounds in one run.

Not a test: prints figures. Why: with the relay woken by every commit's NOTIFY, each event at a
steady pace was a claim of one row, an empty claim and a settle of one; the linger lets one claim
take what commits meanwhile. Two relay processes (linger 0 and `--linger` ms), each on its own
outbox database, share one embedded PostgreSQL and nats-server; each round commits `--rate` rows/s
for `--seconds` (one row per transaction with NOTIFY, as serving's commit does) into one of them,
and measures that relay's CPU and PostgreSQL's (every backend: only the round's relay is busy) per
event, and commit→PubAck lag.

    .venv/bin/python -m bench.bench_relay_linger --rate 150 --seconds 6 --rounds 4
    .venv/bin/python -m bench.bench_relay_linger --base main --rate 500   # a ref's relay against this one
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import psycopg

from bench._harness import _cpu, load_average, median, pct
from bench.bench_relay import REPO_ROOT, _Outbox, _relay, _servers, postgres_pid
from services.common.infra.processes import ServiceProcess


def _round(outbox: _Outbox, relay: ServiceProcess, postgres: int, rate: float, seconds: float) -> tuple[float, ...]:
    """(relay CPU ms/event, PostgreSQL CPU ms/event, lag p50 ms, lag p99 ms)."""
    with psycopg.connect(outbox.conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM outbox")
    relay0, pg0 = _cpu(relay.pid, children=False), _cpu(postgres, children=True)
    count = outbox.commit_at_rate(rate, seconds)
    outbox.wait_published(timeout=120)
    relay_ms = 1000 * (_cpu(relay.pid, children=False) - relay0) / count
    pg_ms = 1000 * (_cpu(postgres, children=True) - pg0) / count
    with psycopg.connect(outbox.conninfo) as conn:
        rows = conn.execute("SELECT EXTRACT(EPOCH FROM published_at - created_at) * 1000 FROM outbox").fetchall()
    lags = [float(r[0]) for r in rows]
    return relay_ms, pg_ms, pct(lags, 50), pct(lags, 99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--rate", type=float, default=150.0, help="rows committed per second")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--linger", type=float, default=20.0, help="the linger (ms) measured against 0")
    parser.add_argument(
        "--base", help="git ref: its relay against this one, both at --linger, instead of 0 vs --linger"
    )
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="memloop-bench-linger-"))
    base_code = None
    if args.base:
        from bench.bench_pipeline_ab import export  # only this mode needs a baseline tree

        base_code = export(args.base)
        os.chdir(logs)  # `python -m` puts the cwd first on a relay's sys.path: not this checkout
    with _servers() as (admin_url, nats_url):
        variants: dict[str, tuple[float, Path | None]] = (
            {f"base {args.base}": (args.linger, base_code), "this tree": (args.linger, REPO_ROOT)}
            if base_code
            else {"linger 0": (0.0, None), f"linger {args.linger:g}": (args.linger, None)}
        )
        outboxes = {name: _Outbox(admin_url) for name in variants}
        relays = {
            name: _relay(
                outboxes[name], nats_url, logs / f"{i}.log", {"MEMLOOP_RELAY_CLAIM_LINGER_MS": str(ms)}, code=code
            )
            for i, (name, (ms, code)) in enumerate(variants.items())
        }
        postgres = postgres_pid(next(iter(outboxes.values())).conninfo)
        results: dict[str, list[tuple[float, ...]]] = {name: [] for name in variants}
        print(f"relay claim linger at {args.rate:g} rows/s (load {load_average()})", flush=True)
        try:
            for i in range(args.rounds):
                names = list(variants) if i % 2 == 0 else list(reversed(variants))
                for name in names:
                    figures = _round(outboxes[name], relays[name], postgres, args.rate, args.seconds)
                    results[name].append(figures)
                    print(
                        f"round {i + 1} {name}: relay {figures[0]:.3f} ms/event, postgres {figures[1]:.3f} "
                        f"ms/event, lag p50 {figures[2]:.1f} p99 {figures[3]:.1f} ms (load {load_average()})",
                        flush=True,
                    )
        finally:
            for relay in relays.values():
                relay.terminate()
    base, new = variants
    print(f"\nmedians of {args.rounds} rounds (load {load_average()}):")
    print(f"{'':>22} {base:>10} {new:>10} {'ratio':>6}")
    for index, what in enumerate(("relay CPU ms/event", "postgres CPU ms/event", "lag p50 ms", "lag p99 ms")):
        b = median([r[index] for r in results[base]])
        n = median([r[index] for r in results[new]])
        print(f"{what:>22} {b:10.3f} {n:10.3f} {n / b if b else 0:6.2f}")


if __name__ == "__main__":
    main()
