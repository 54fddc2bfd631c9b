"""Consolidation on PostgreSQL: the job's time for one user with 1e4 (and 1e5) memories, and the
memories destroyed by a replace-style write-back against the merge on the same racing harness.

Not a test: prints figures, and `run(quick)` returns rows for `bench/run_all.py`.

1. Memories destroyed: the in-memory racing harness (`race_every_position`, the twin of the store
   the unit tests prove the full matrix on): each turn of the Priya conversation lands at every
   position of a job, once with the naive `store.replace(consolidate(store.all()))` write-back and
   once with the merge against a snapshot. Destroyed = live in the serialised run, not in the race.
2. Job time: a fresh memory database (migrations as the service runs them), one synthetic user
   seeded the way ApplyLearning would leave it (repeats of one text are one memory with several
   source events; a 384-d vector per memory), then the real job — the SQL adapters, the advisory
   lock on its own connection, one read, the pure compute, one write-back transaction — timed per
   phase through the job's phase hook. Then the same job again (the re-run must retire nothing).
   Baseline: the same job over the same memories on the in-memory store (pure Python, no I/O).

Servers: an embedded PostgreSQL under a temporary folder, or MEMLOOP_BENCH_DATABASE_URL (admin).

    .venv/bin/python -m bench.bench_consolidation_pg [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.orm import sessionmaker

from bench.bench_consolidation import race_everywhere, synthetic_user
from services.common.db import make_engine, run_migrations, url_for_role
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.memory.bootstrap import MIGRATIONS
from services.memory.consolidation.adapters.repository import SqlConsolidationUnitOfWork, job_sessions
from services.memory.consolidation.domain.consolidation import consolidate, plan_write_back, read_snapshot
from services.memory.consolidation.service.job import ConsolidationDeps, RunConsolidation, run_consolidation
from services.memory.consolidation.service.ports import ConsolidationJob, ConsolidationUnitOfWork, JobPhase
from services.memory.core.adapters.embedders import HashingEmbedder
from services.memory.core.domain.model import MemoryRecord
from tests.harness.consolidation_store import InMemoryMemoryStore, WriteBackMode

APP_ROLE = "memloop_memory_app"
JOB_TIME_GOAL_S = {10_000: 30.0, 100_000: 300.0}


class _Quiet:
    """No replicas, no notices, no Prometheus in the bench: the job's own work only."""

    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None: ...
    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None: ...
    def job_finished(self, job: ConsolidationJob, seconds: float) -> None: ...
    def scheduler_running(self, running: bool) -> None: ...
    def decision_applied(self, outcome: str) -> None: ...
    def event_repeated(self) -> None: ...
    def conflict_retried(self) -> None: ...
    def retrieval_observed(self, seconds: float, cache_hit: bool) -> None: ...
    def texts_embedded(self, kind: str, count: int) -> None: ...
    def index_state(self, vectors: int, watermark: int) -> None: ...
    def index_loaded(self, source: str) -> None: ...
    def vectors_filled(self, count: int) -> None: ...


class _Clock:
    """The job's phase hook, recording when each phase was reached."""

    def __init__(self) -> None:
        self.marks: dict[JobPhase, float] = {}

    def __call__(self, phase: JobPhase, job: ConsolidationJob) -> None:
        self.marks[phase] = time.perf_counter()


@contextmanager
def _server() -> Iterator[str]:
    url = os.environ.get("MEMLOOP_BENCH_DATABASE_URL", "")
    if url:
        yield url
        return
    root = Path(tempfile.mkdtemp(prefix="memloop-bench-consolidation-"))
    postgres = EmbeddedPostgres(root / "pg", durable=False, log_path=root / "postgres.log")
    try:
        postgres.start()
        yield postgres.admin_url
    finally:
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def as_applied(records: list[MemoryRecord]) -> list[MemoryRecord]:
    """What ApplyLearning leaves: a repeated text is one memory with every repeat's event as a source.

    The synthetic generator repeats about a third of its turns verbatim, so `n` memories take
    roughly 2.5 n turns; the bench generates 3 n and keeps the first `n` memories.
    """
    first: dict[str, MemoryRecord] = {}
    for record in records:
        keeper = first.setdefault(record.candidate_key, record)
        if keeper is not record:
            keeper.source_event_ids = (*keeper.source_event_ids, *record.source_event_ids)
    return list(first.values())


def time_in_memory(records: list[MemoryRecord]) -> float:
    """The baseline: the same job over the same memories on the in-memory store."""
    store = InMemoryMemoryStore(dataclasses.replace(r) for r in records)
    started = time.perf_counter()
    snapshot = read_snapshot(store.all_active())
    store.apply(
        plan_write_back(snapshot, consolidate(snapshot.memories), store.active_ids()), now=records[0].created_at
    )
    return time.perf_counter() - started


def _seed(admin_url: str, kept: list[MemoryRecord]) -> None:
    """COPY the user's memories in, as the owner (bypassing nothing the job relies on)."""
    embedder = HashingEmbedder()
    vectors = embedder.embed([r.text for r in kept])
    conninfo = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo) as conn, conn.cursor() as cur:
        columns = "memory_id, tenant, user_id, type, text, status, confidence, origin, candidate_key, event_id, "
        # observed_at too: a claim's time is when it was stated, and the column's default (the COPY's
        # now()) would make every claim of the user simultaneous, every slot conflict a tie for review
        columns += "trace_id, policy_version, status_event_id, created_at, updated_at, observed_at"
        with cur.copy(f"COPY memories ({columns}) FROM STDIN") as copy:
            for r in kept:
                event_id = r.source_event_ids[0]
                row = (r.memory_id, r.tenant, r.user, r.type.value, r.text, "active", r.confidence, r.origin.value)
                times = (r.created_at, r.updated_at, r.stated_at)
                copy.write_row((*row, r.candidate_key, event_id, r.trace_id, r.policy_version, event_id, *times))
        with cur.copy("COPY memory_sources (memory_id, event_id, tenant, trace_id) FROM STDIN") as copy:
            for r in kept:
                for event_id in r.source_event_ids:
                    copy.write_row((r.memory_id, event_id, r.tenant, r.trace_id))
        with cur.copy("COPY memory_vectors (memory_id, embedder, tenant, dim, vector) FROM STDIN") as copy:
            for r, vector in zip(kept, vectors, strict=True):
                copy.write_row((r.memory_id, embedder.name, r.tenant, embedder.dim, vector.astype("<f4").tobytes()))
        conn.execute("ANALYZE")


def _deps(admin_url: str, clock: _Clock) -> tuple[ConsolidationDeps, Any]:
    engine = make_engine(url_for_role(admin_url, APP_ROLE), pool_size=4, application_name="bench-consolidation")
    sessions = sessionmaker(engine)

    def unit_of_work(tenant: str) -> ConsolidationUnitOfWork:
        return SqlConsolidationUnitOfWork(sessions, tenant)

    quiet = _Quiet()
    deps = ConsolidationDeps(job_sessions(engine), unit_of_work, quiet, quiet, quiet, hook=clock)
    return deps, engine


def time_pg_job(admin_url: str, records: list[MemoryRecord]) -> dict[str, float]:
    """Seed a fresh database with one user's memories; time one job and its re-run."""
    return time_job_in(create_database(admin_url, f"bench_consolidation_{uuid.uuid4().hex[:8]}"), records)


def time_job_in(url: str, records: list[MemoryRecord]) -> dict[str, float]:
    """`time_pg_job` in a database that exists and is empty (`url`: its admin URL)."""
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    _seed(url, records)
    clock = _Clock()
    deps, engine = _deps(url, clock)
    command = RunConsolidation(records[0].tenant, records[0].user, wait=False, actor="bench")
    try:
        started = time.perf_counter()
        job = run_consolidation(command, deps)
        ended = time.perf_counter()
        marks = dict(clock.marks)
        rerun_started = time.perf_counter()
        rerun = run_consolidation(command, deps)
        rerun_seconds = time.perf_counter() - rerun_started
    finally:
        engine.dispose()
    if job.error or rerun.error:
        raise SystemExit(f"job failed: {job.error or rerun.error}")
    return {
        "memories": job.snapshot_size,
        "total": ended - started,
        "read": marks[JobPhase.AFTER_READ] - marks[JobPhase.BEFORE_READ],
        "compute": marks[JobPhase.AFTER_COMPUTE] - marks[JobPhase.AFTER_READ],
        "lock_and_plan": marks[JobPhase.WRITE_BACK] - marks[JobPhase.AFTER_COMPUTE],
        "apply": marks[JobPhase.BEFORE_COMMIT] - marks[JobPhase.WRITE_BACK],
        "commit": ended - marks[JobPhase.BEFORE_COMMIT],
        "kept": job.kept,
        "retired": job.retired,
        "review": job.sent_to_review,
        "rerun": rerun_seconds,
        "rerun_retired": rerun.retired,
    }


def run(quick: bool) -> list[dict[str, Any]]:
    """Rows of (figure, memloop, baseline, ratio, goal, met) for run_all."""
    races, replaced = race_everywhere(WriteBackMode.REPLACE)
    _, merged = race_everywhere(WriteBackMode.MERGE)
    rows: list[dict[str, Any]] = [
        {
            "figure": f"memories destroyed by the write-back, Priya, {races} raced positions (baseline: replace)",
            "memloop": merged,
            "baseline": replaced,
            "ratio": None,
            "goal": "0 (merge against the snapshot)",
            "met": merged == 0,
        }
    ]
    # (memories, every claim stated at one instant): the second shape is a bulk import, where every
    # conflict of a slot is a tie and the job sends each contender to review
    cases = [(10_000, False), (10_000, True)] + ([] if quick else [(100_000, False)])
    with _server() as admin_url:
        for n, simultaneous in cases:
            records = as_applied(synthetic_user(3 * n))[:n]
            shape = ""
            if simultaneous:
                records = [dataclasses.replace(r, observed_at=records[0].created_at) for r in records]
                shape = ", all stated at one instant"
            pg = time_pg_job(admin_url, records)
            pure = time_in_memory(records)
            phases = ", ".join(f"{k} {pg[k]:.2f}" for k in ("read", "compute", "lock_and_plan", "apply", "commit"))
            rows.append(
                {
                    "figure": f"job s on PostgreSQL, one user with {int(pg['memories']):,} memories{shape} ({phases}; "
                    f"kept {int(pg['kept'])}, retired {int(pg['retired'])}, sent to review {int(pg['review'])}) "
                    "(baseline: in memory)",
                    "memloop": round(pg["total"], 2),
                    "baseline": round(pure, 2),
                    "ratio": round(pg["total"] / pure, 2),
                    "goal": f"< {JOB_TIME_GOAL_S[n]:g} s",
                    "met": pg["total"] < JOB_TIME_GOAL_S[n],
                }
            )
            rows.append(
                {
                    "figure": f"re-run right after, {n:,} memories{shape}: memories retired "
                    f"(re-run s {pg['rerun']:.2f})",
                    "memloop": int(pg["rerun_retired"]),
                    "baseline": None,
                    "ratio": None,
                    "goal": "0 (idempotent)",
                    "met": pg["rerun_retired"] == 0,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1e4 memories only (default: 1e4 and 1e5)")
    rows = run(parser.parse_args().quick)
    for row in rows:
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}"
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        baseline = "" if row["baseline"] is None else row["baseline"]
        figures = f"memloop {row['memloop']}  baseline {baseline}  ratio {ratio}  goal {row['goal']}  met {met}"
        print(f"{row['figure']}\n    {figures}")


if __name__ == "__main__":
    main()
