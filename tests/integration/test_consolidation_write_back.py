"""What a job's write-back leaves in PostgreSQL, read back row by row.

The write-back queues its retirements, new versions, copied provenance and vectors and audit rows
and sends them as a few set-based statements with its commit. These checks read the tables as the
owner after a job over the bench's synthetic user (no index, no replica: nothing else writes a
vector or a source), so each copy is the job's own and a missing or misdirected one is seen.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from bench.bench_consolidation import synthetic_user
from bench.bench_consolidation_pg import as_applied, time_job_in
from services.memory.consolidation.domain.consolidation import RetireReason
from tests.integration.deletion_support import libpq_url

pytestmark = pytest.mark.integration

MEMORIES = 600


def _rows(url: str, sql: str, *params: str) -> list[Any]:
    with psycopg.connect(libpq_url(url)) as conn:
        return conn.execute(sql, params).fetchall()


def test_each_new_version_carries_its_members_sources_and_vector_and_each_transition_its_audit_row(
    new_database: Callable[[str], str],
) -> None:
    # Given: one user's memories as ApplyLearning leaves them, each with its sources and vector
    url = new_database("consolidation_write_back")
    # When: a job consolidates them (and a re-run finds nothing to do)
    report = time_job_in(url, as_applied(synthetic_user(3 * MEMORIES))[:MEMORIES])
    assert report["retired"] > 0 and report["rerun_retired"] == 0
    memories = _rows(url, "SELECT memory_id, text, status, superseded_by, status_event_id, event_id FROM memories")
    sources: dict[str, set[str]] = defaultdict(set)
    for memory_id, event_id in _rows(url, "SELECT memory_id, event_id FROM memory_sources"):
        sources[memory_id].add(event_id)
    vectors: dict[str, list[bytes]] = defaultdict(list)
    for memory_id, vector in _rows(url, "SELECT memory_id, vector FROM memory_vectors"):
        vectors[memory_id].append(bytes(vector))
    text = {row[0]: row[1] for row in memories}
    job_id = next(row[4] for row in memories if row[2] == "superseded")
    versions = {row[0] for row in memories if row[5] == job_id}
    replaced: dict[str, list[str]] = defaultdict(list)
    for memory_id, _, status, successor, _, _ in memories:
        if status == "superseded" and successor in versions:
            replaced[successor].append(memory_id)
    # Then: the job wrote new versions, each active and replacing at least one record
    assert versions and set(replaced) == versions
    assert all(row[2] == "active" for row in memories if row[0] in versions)
    # Then: every active memory has exactly one vector; a version's is a same-worded predecessor's
    assert all(len(vectors[row[0]]) == 1 for row in memories if row[2] == "active")
    for version in versions:
        same_wording = [old for old in replaced[version] if text[old] == text[version]]
        assert same_wording and vectors[version][0] in {vectors[old][0] for old in same_wording}
    # Then: a version's sources are the union of the records it replaced (no event lost or invented)
    for version in versions:
        assert sources[version] == set().union(*(sources[old] for old in replaced[version]))
    # Then: one audit row per transition, each naming the job as its event
    audit = _rows(url, "SELECT action, count(*) FROM audit_events WHERE event_id = %s GROUP BY action", job_id)
    retired = sum(1 for row in memories if row[2] == "superseded" and row[4] == job_id)
    assert dict(audit) == {"memory.superseded": retired, "memory.stored": len(versions)}
    # Then: each retirement says why with a code of its own, not as a person's words (no operator note)
    reasons = _rows(
        url,
        "SELECT detail->>'retire_reason' FROM audit_events WHERE event_id = %s AND action = 'memory.superseded'",
        job_id,
    )
    assert len(reasons) == retired
    assert {r for (r,) in reasons} <= {"new_version", *(reason.value for reason in RetireReason)}
    assert _rows(url, "SELECT count(*) FROM operator_notes") == [(0,)]
