"""Contradictions a job sends to review: one lookup for the whole plan, each contender offered once.

The write-back used to ask PostgreSQL, contender by contender, whether a review item already
existed; a user whose claims were all stated at one instant (a bulk import) has tens of thousands
of contenders, and each question scanned the user's candidates. The lookup is now one statement
per job (the SQL side is in tests/integration/test_consolidation_job.py: a second job offers nothing
twice); these tests pin the use case's side with a recording unit of work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from services.memory.consolidation.domain.consolidation import Contradiction, Snapshot, WriteBackPlan
from services.memory.consolidation.service.ports import ConsolidationJob, ConsolidationUnitOfWork, JobState
from services.memory.consolidation.service.review import send_to_review
from services.memory.core.service.ports import Transition
from tests.unit.consolidation_corpus import memory

NOW = datetime(2026, 12, 4, tzinfo=UTC)


@dataclass
class _Recorder:
    """The parts of the unit of work `send_to_review` touches, recording what it was asked."""

    existing: frozenset[str] = frozenset()
    lookups: list[list[str]] = field(default_factory=list)
    added: list[Any] = field(default_factory=list)

    def existing_review_keys(self, user: str, candidate_keys: Any) -> frozenset[str]:
        keys = list(candidate_keys)
        self.lookups.append(keys)
        return self.existing & set(keys)

    def add(self, item: Any) -> None:
        self.added.append(item)


class _Uow:
    def __init__(self, recorder: _Recorder) -> None:
        self.consolidation = recorder
        self.candidates = self.reviews = self.audit = recorder


def _plan(contradictions: list[Contradiction]) -> WriteBackPlan:
    return WriteBackPlan((), (), (), (), (), tuple(contradictions))


def _job() -> ConsolidationJob:
    return ConsolidationJob("job-1", "northwind", "priya", JobState.RUNNING, NOW)


def _run(recorder: _Recorder, contradictions: list[Contradiction], count: int) -> list[str]:
    records = [memory(f"m{i}", f"Priya lives in city {i}") for i in range(count)]
    snapshot = Snapshot(frozenset(r.memory_id for r in records), tuple(records))
    by = Transition("job-1", "trace-1", "consolidation", NOW)
    uow = cast(ConsolidationUnitOfWork, _Uow(recorder))
    return send_to_review(uow, _job(), _plan(contradictions), snapshot, by)


def test_a_plan_with_many_contradictions_asks_one_question_and_offers_every_contender() -> None:
    ties = [Contradiction(f"home/{i}", (f"m{2 * i}", f"m{2 * i + 1}")) for i in range(500)]
    recorder = _Recorder()
    created = _run(recorder, ties, 1000)
    assert len(recorder.lookups) == 1 and len(recorder.lookups[0]) == 1000
    assert len(created) == 1000
    candidates = [item for item in recorder.added if type(item).__name__ == "CandidateRecord"]
    assert sorted(c.ordinal for c in candidates) == list(range(1000))  # ordinals stay dense and unique


def test_contenders_already_in_review_are_not_offered_again() -> None:
    ties = [Contradiction("home", ("m0", "m1")), Contradiction("work", ("m2", "m3"))]
    first = _Recorder()
    _run(first, ties, 4)
    keys = first.lookups[0]
    again = _Recorder(existing=frozenset(keys[:3]))
    created = _run(again, ties, 4)
    assert len(created) == 1  # only the contender whose item did not exist yet


def test_the_same_contradiction_listed_twice_in_one_plan_is_offered_once() -> None:
    tie = Contradiction("home", ("m0", "m1"))
    recorder = _Recorder()
    assert len(_run(recorder, [tie, tie], 2)) == 2
