"""Serving's p99 with the loop, settings of the learning side compared on ONE stack in ONE run.

Not a test: prints figures. `bench_serving`'s what-ifs each ran on a stack of their own, so a
setting's effect was mixed with whatever else that stack's minutes held (other work on the machine,
a fresh database). Here every variant runs on the same stack, in alternating rounds (A, B, B, A,
A, B, ...), and every round has its own learning-off window right before its loop window: a round's
ratio is loop p99 / its own learning-off p99. Per variant the p99 is also pooled over its rounds.

A variant is a set of service environment variables (the services whose database backends the
setting touches are restarted with it) and PostgreSQL settings (ALTER SYSTEM + reload: only
settings a reload applies). While each window runs, a sampler reads `pg_stat_activity` every 25
ms and counts what each group of backends (by application name) was waiting for, so the figures
say what serving's backends waited on, not just how long.

    .venv/bin/python -m bench.bench_serving_ab [--variants idle nice] [--rates 50 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from bench._harness import load_average, pct, run_service, running_stack, stop_service
from bench._learning_placement import burning, learning_gated, learning_pinned, split_cores, unsplit_cores
from bench._pg_watch import WaitSampler, admin_url, server_counters
from bench.bench_serving import FULL, Measured, ServingBench, Sizes
from services.common.infra.postgres import EmbeddedPostgres


@dataclass(frozen=True)
class Variant:
    name: str
    env: Mapping[str, str] = field(default_factory=dict)
    pg: Mapping[str, str] = field(default_factory=dict)
    memory_db: Mapping[str, str] = field(default_factory=dict)
    """Settings of memory's database (ALTER DATABASE ... SET): its sessions only, from their next start."""
    pin_learning: bool = False
    """True: every learning process (worker, relay, memory-ingest, policy, nats-server) and
    learning's database backends are confined to the last core during the loop window; serving, its
    backends and retrieval keep every core. A what-if: are shared cores and caches the gap?"""
    burner: str = ""
    """`python` or `numpy`: the loop window runs serving with learning OFF beside `bench._burner` at
    idle priority, using `burn_duty` of one core: does any idle-priority CPU beside serving cost
    its p99 what learning does?"""
    burn_duty: float = 0.37
    """The burner's share of one core: 0.37 is learning's beside serving at 50 req/s (7.4 CPU-s more
    than learning off in a 20 s window, `bench/results/20261203T134500Z-serving_ab_server.log`)."""
    consumers: bool = True
    split_cores: bool = False
    """True: in BOTH windows serving, its database backends and the benchmark's client run on the
    first core only, and every learning process and backend on the last: learning on a core serving
    does not share (each window's measured requests start after the pinning)."""
    gate: bool = False
    """True: while any measured request is in flight, the learning processes are stopped (SIGSTOP;
    SIGCONT when none is): the upper bound of a gate that keeps learning off the cores while serving
    answers. Learning's database backends run on (one holding a lock serving needs must finish)."""
    """False: the loop window runs serving with learning on (outbox rows, wake-ups) but the relay
    and worker stopped, so no learning work runs beside it: serving's own share of the loop's cost."""


VARIANTS = {
    "idle": Variant("idle", {"MEMLOOP_LEARNING_BACKENDS": "idle"}),
    "nice": Variant("nice", {"MEMLOOP_LEARNING_BACKENDS": "nice"}),
    # PostgreSQL's defaults, spelled out, so a variant that changes them can be undone by the other
    "pgdefault": Variant("pgdefault", pg={"commit_delay": "0", "commit_siblings": "5", "wal_writer_delay": "200ms"}),
    "groupcommit": Variant("groupcommit", pg={"commit_delay": "200", "commit_siblings": "2"}),
    "relaysync": Variant("relaysync", {"MEMLOOP_RELAY_SYNCHRONOUS_COMMIT": "on"}),
    "relayasync": Variant("relayasync", {"MEMLOOP_RELAY_SYNCHRONOUS_COMMIT": "off"}),
    "notifycommit": Variant("notifycommit", {"MEMLOOP_SERVING_NOTIFY": "commit"}),
    "notifyafter": Variant("notifyafter", {"MEMLOOP_SERVING_NOTIFY": "after"}),
    "notifycoalesce": Variant("notifycoalesce", {"MEMLOOP_SERVING_NOTIFY": "coalesce"}),
    # the worker's batch window: every batch's fixed costs against how bursty learning's work is
    "wait150": Variant("wait150", {"MEMLOOP_WORKER_BATCH_WAIT_MS": "150"}),
    "wait300": Variant("wait300", {"MEMLOOP_WORKER_BATCH_WAIT_MS": "300"}),
    "wait1000": Variant("wait1000", {"MEMLOOP_WORKER_BATCH_WAIT_MS": "1000"}),
    # memory's commits not waiting for the WAL flush (a diagnosis: does learning's WAL slow serving's
    # commits? Not a safe setting: an applied event the worker acked could be lost with the host)
    "memoryasync": Variant("memoryasync", memory_db={"synchronous_commit": "off"}),
    "memorysync": Variant("memorysync", memory_db={"synchronous_commit": "on"}),
    # diagnoses of the server both sides share (every one spells all three settings, so the next
    # variant undoes the last): no flush to the disk at all (NOT safe: a diagnosis of whether the
    # disk's flushes are the loop's cost), no autovacuum, no spread checkpoint in the window
    "serverdefault": Variant("serverdefault", pg={"fsync": "on", "autovacuum": "on", "checkpoint_timeout": "5min"}),
    "fsyncoff": Variant("fsyncoff", pg={"fsync": "off", "autovacuum": "on", "checkpoint_timeout": "5min"}),
    "autovacuumoff": Variant("autovacuumoff", pg={"fsync": "on", "autovacuum": "off", "checkpoint_timeout": "5min"}),
    "checkpointlate": Variant("checkpointlate", pg={"fsync": "on", "autovacuum": "on", "checkpoint_timeout": "1h"}),
    "outboxonly": Variant("outboxonly", consumers=False),
    "gate": Variant("gate", gate=True),
    "splitcores": Variant("splitcores", split_cores=True),
    # the relay's claims: how long an idle relay woken by NOTIFY waits before claiming (default 20)
    "linger250": Variant("linger250", {"MEMLOOP_RELAY_CLAIM_LINGER_MS": "250"}),
    "linger1000": Variant("linger1000", {"MEMLOOP_RELAY_CLAIM_LINGER_MS": "1000"}),
    "burnpython": Variant("burnpython", burner="python"),
    "burnnumpy": Variant("burnnumpy", burner="numpy"),
    "burnpython10": Variant("burnpython10", burner="python", burn_duty=0.10),
    "burnpython20": Variant("burnpython20", burner="python", burn_duty=0.20),
    "burnpythongated": Variant("burnpythongated", burner="python", gate=True),
    "pinlearning": Variant("pinlearning", pin_learning=True),
}


def variant(spec: str) -> Variant:
    """A named variant, or several joined by '+' (`nice+relayasync`): their settings together."""
    parts = [VARIANTS[name] for name in spec.split("+")]
    env: dict[str, str] = {}
    pg: dict[str, str] = {}
    memory_db: dict[str, str] = {}
    for part in parts:
        env |= part.env
        pg |= part.pg
        memory_db |= part.memory_db
    return Variant(
        spec,
        env,
        pg,
        memory_db,
        pin_learning=any(part.pin_learning for part in parts),
        burner=next((part.burner for part in parts if part.burner), ""),
        gate=any(part.gate for part in parts),
        split_cores=any(part.split_cores for part in parts),
        burn_duty=min(part.burn_duty for part in parts),
        consumers=all(part.consumers for part in parts),
    )


# every service whose PostgreSQL backends a lowered thread uses, except serving itself (restarted by
# every learning-off / learning-on switch) and the relay and worker (stopped while learning is off)
_SWITCHED = {name for one in VARIANTS.values() for name in one.env}
RESTARTED = ("policy", "memory", "memory-ingest", "serving-loop")


@dataclass
class Round:
    variant: str
    rate: float
    off: Measured
    loop: Measured

    @property
    def ratio(self) -> float:
        return self.loop.p99 / self.off.p99


_memory_db_applied: dict[str, str] = {}
"""The memory database's settings as the last variant left them (one stack per run)."""


def apply_variant(bench: ServingBench, variant: Variant) -> None:
    """Every service's environment gets the variant's; those with learning backends restart; the
    PostgreSQL settings are set and reloaded. Serving, relay and worker follow at the next switch."""
    stack = bench.stack
    before = dict(stack.services["memory"].env)
    for handle in stack.services.values():
        for name in _SWITCHED - variant.env.keys():  # another variant's setting: back to the default
            handle.env.pop(name, None)
        handle.env.update(variant.env)
    changed = {name for name in _SWITCHED if before.get(name) != stack.services["memory"].env.get(name)}
    if variant.pg:
        with psycopg.connect(admin_url(stack), autocommit=True) as conn:
            for name, value in variant.pg.items():
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            conn.execute("SELECT pg_reload_conf()")
    memory_db_changed = dict(variant.memory_db) != _memory_db_applied
    if memory_db_changed:  # another variant's database settings undone, this one's set
        database = f"{stack.spec.database_prefix}_memory"
        with psycopg.connect(admin_url(stack), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{database}" RESET ALL')
            for name, value in variant.memory_db.items():
                conn.execute(f"ALTER DATABASE \"{database}\" SET {name} = '{value}'")
        _memory_db_applied.clear()
        _memory_db_applied.update(variant.memory_db)
    if memory_db_changed or changed - {"MEMLOOP_RELAY_SYNCHRONOUS_COMMIT", "MEMLOOP_SERVING_NOTIFY"}:
        for name in RESTARTED:
            if name in stack.services:
                run_service(stack, name)
    bench.mode = ""  # the next learning_off stops relay and worker and restarts serving


LOOP_GROUPS = (
    "serving",
    "memory-ingest",
    "serving-loop",
    "relay",
    "walwriter",
    "checkpointer",
    "background writer",
    "autovacuum worker",
)


def measure_round(bench: ServingBench, variant: Variant, rate: float, count: int) -> Round:
    apply_variant(bench, variant)
    print(f"-- {variant.name} @ {rate:g}/s (load average {load_average()})", flush=True)
    bench.learning_off()
    split = (lambda: split_cores(bench.stack)) if variant.split_cores else None
    with WaitSampler(admin_url(bench.stack)) as off_waits, server_counters(admin_url(bench.stack), "off "):
        off = bench.measure("off", rate=rate, count=count, on_start=split)
    for group in ("serving", "checkpointer", "autovacuum worker"):
        print("     off  waits: " + off_waits.describe(group), flush=True)
    loop = _beside_burner(bench, variant, rate, count) if variant.burner else _loop(bench, variant, rate, count, split)
    one = Round(variant.name, rate, off, loop)
    print(f"   round ratio {variant.name} @ {rate:g}/s: {one.loop.p99:.2f} / {one.off.p99:.2f} = {one.ratio:.2f}")
    return one


def _beside_burner(bench: ServingBench, variant: Variant, rate: float, count: int) -> Measured:
    """Serving with learning still off, beside the variant's burner (`Variant.burner`)."""
    with (
        burning(variant.burner, variant.burn_duty) as burner,
        learning_gated(bench, variant.gate, only=[burner]),
        WaitSampler(admin_url(bench.stack)) as burn_waits,
    ):
        loop = bench.measure("off", rate=rate, count=count)  # learning is off: nothing to wait for
    print("     burn waits: " + burn_waits.describe("serving"), flush=True)
    return loop


def _loop(bench: ServingBench, variant: Variant, rate: float, count: int, split: Callable[[], None] | None) -> Measured:
    """Serving with learning on, the variant's what-ifs applied; drained before it returns."""
    bench.learning_on()
    if not variant.consumers:
        stop_service(bench.stack, "worker")
        stop_service(bench.stack, "relay")
        bench.mode = ""  # the next learning_on starts them again
    with (
        learning_gated(bench, variant.gate),
        learning_pinned(bench.stack, variant.pin_learning),
        WaitSampler(admin_url(bench.stack)) as loop_waits,
        server_counters(admin_url(bench.stack), "loop"),
    ):
        loop = bench.measure("loop", rate=rate, count=count, on_start=split)
    if variant.split_cores:
        unsplit_cores(bench.stack)
    if not variant.consumers:
        bench.learning_on()  # the relay and worker learn what the window left, before the drain
    for group in LOOP_GROUPS:
        print("     loop waits: " + loop_waits.describe(group), flush=True)
    bench.drain(timeout=900)
    return loop


@contextlib.contextmanager
def memory_cluster(separate: bool) -> Iterator[str]:
    """An admin URL for memory's database: a second embedded PostgreSQL (fsync on, same disk, its
    own WAL) when `separate`, else "" (beside serving's, as the stack does by default)."""
    if not separate:
        yield ""
        return
    folder = Path(tempfile.mkdtemp(prefix="memloop-bench-memory-pg-"))
    postgres = EmbeddedPostgres(folder / "postgres")
    postgres.start()
    try:
        yield postgres.admin_url
    finally:
        postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


def run(
    variants: list[Variant], rates: list[float], rounds: int, sizes: Sizes, *, separate_memory: bool = False
) -> list[Round]:
    done: list[Round] = []
    with (
        memory_cluster(separate_memory) as memory_admin,
        running_stack("serving-ab", "minilm", memory_database_admin_url=memory_admin) as stack,
    ):
        if separate_memory:
            print("memory's database on a PostgreSQL server of its own", flush=True)
        bench = ServingBench(stack, sizes)
        print(f"serving A/B {[v.name for v in variants]} (load average {load_average()})", flush=True)
        for rate in rates:
            count = sizes.high if rate >= 30 else sizes.low
            for r in range(rounds):
                order = variants if r % 2 == 0 else list(reversed(variants))  # A B C, C B A, ...
                for variant in order:
                    done.append(measure_round(bench, variant, rate, count))
        if any(v.pg for v in variants):
            with psycopg.connect(admin_url(stack), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM RESET ALL")
    summarise(done, variants, rates)
    return done


def summarise(done: list[Round], variants: list[Variant], rates: list[float]) -> None:
    print(f"\nsummary (load average at the end {load_average()}):")
    for rate in rates:
        for variant in variants:
            mine = [r for r in done if r.rate == rate and r.variant == variant.name]
            if not mine:
                continue
            offs = [ms for r in mine for ms in r.off.result.latencies_ms]
            loops = [ms for r in mine for ms in r.loop.result.latencies_ms]
            each = ", ".join(f"{r.ratio:.2f}" for r in mine)
            backlog = max(r.loop.backlog for r in mine)
            print(
                f"  {variant.name:<12} @ {rate:g}/s: pooled p99 loop {pct(loops, 99):.2f} / off {pct(offs, 99):.2f} ms"
                f" = {pct(loops, 99) / pct(offs, 99):.2f}; per round {each}; p50 loop {pct(loops, 50):.2f} / off"
                f" {pct(offs, 50):.2f}; backlog max {backlog}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--variants", nargs="+", default=["idle", "nice"], help=f"of {sorted(VARIANTS)}, or a+b")
    parser.add_argument("--rates", nargs="+", type=float, default=[50.0, 10.0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds per variant and rate")
    parser.add_argument("--high", type=int, default=FULL.high, help="requests per window at >= 30/s")
    parser.add_argument("--low", type=int, default=FULL.low, help="requests per window below 30/s")
    parser.add_argument(
        "--separate-memory-cluster", action="store_true", help="memory's database on a PostgreSQL server of its own"
    )
    args = parser.parse_args()
    sizes = Sizes(**{**FULL.__dict__, "high": args.high, "low": args.low})
    started = time.monotonic()
    variants = [variant(v) for v in args.variants]
    if args.separate_memory_cluster and any(v.memory_db for v in variants):
        parser.error("the memory database variants set serving's server, not a separate memory cluster")
    run(variants, args.rates, args.rounds, sizes, separate_memory=args.separate_memory_cluster)
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
