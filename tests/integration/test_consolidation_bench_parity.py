"""The consolidation bench compares like with like: on PostgreSQL the job decides what it decides
in memory, for the bench's own synthetic users.

`bench/bench_consolidation_pg.py` reports the PostgreSQL job's time against the same job on the
in-memory store. Until 2026-12-04 its seed left `observed_at` at the column's default, so every
claim was simultaneous on PostgreSQL and a second apart in memory: the two sides did different
work (tens of thousands of review items on one side, none on the other) and nothing noticed. This
test runs the bench's own seed and job on a small user and compares the decisions: what is kept,
retired and sent to review must be the same on both stores, in both shapes the bench measures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from bench.bench_consolidation import synthetic_user
from bench.bench_consolidation_pg import as_applied, time_job_in
from services.memory.consolidation.domain.consolidation import consolidate, plan_write_back, read_snapshot

pytestmark = pytest.mark.integration

MEMORIES = 600


@pytest.mark.parametrize("simultaneous", [False, True], ids=["stated-apart", "stated-at-one-instant"])
def test_the_postgres_job_decides_what_the_in_memory_job_decides(
    new_database: Callable[[str], str], simultaneous: bool
) -> None:
    records = as_applied(synthetic_user(3 * MEMORIES))[:MEMORIES]
    if simultaneous:
        records = [dataclasses.replace(r, observed_at=records[0].created_at) for r in records]
    snapshot = read_snapshot(dataclasses.replace(r) for r in records)
    plan = plan_write_back(snapshot, consolidate(snapshot.memories), snapshot.ids)

    on_postgres = time_job_in(new_database("consolidation_parity"), records)

    decided = (on_postgres["kept"], on_postgres["retired"], on_postgres["review"])
    assert decided == (plan.kept, plan.retired, plan.sent_to_review)
    assert plan.retired > 0  # the user exercises corrections, not only restatements
    assert (plan.sent_to_review > 0) == simultaneous  # ties exist exactly when claims are simultaneous
    assert on_postgres["rerun_retired"] == 0
