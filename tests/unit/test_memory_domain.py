"""Pure lifecycle rules of memories and review items."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from services.common.vocabulary import Decision, MemoryType, Origin, Outcome
from services.memory.core.domain.errors import MemoryNotActive, ReviewAlreadyResolved
from services.memory.core.domain.model import (
    MemoryRecord,
    MemoryStatus,
    StoreAction,
    deprecated,
    lineage_order,
    plan_store,
    superseded,
)
from services.memory.core.domain.outcome import AppliedDecision, ApplyOutcome
from services.memory.core.domain.review import Resolution, ReviewItem, ReviewState, needs_resolution, resolved

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _record(memory_id: str, status: MemoryStatus = MemoryStatus.ACTIVE, **changes: object) -> MemoryRecord:
    record = MemoryRecord(
        memory_id=memory_id,
        tenant="acme",
        user="alice",
        type=MemoryType.PREFERENCE,
        text="meetings after 10:00",
        status=status,
        confidence=0.9,
        origin=Origin.OWNER,
        candidate_key=f"key-{memory_id}",
        trace_id="t",
        policy_version="p",
        created_at=NOW,
        updated_at=NOW,
        intent_key="meeting_time_window",
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def test_same_meaning_is_reused_before_same_intent_is_superseded() -> None:
    same_meaning, same_intent = _record("a"), _record("b")
    assert plan_store(same_meaning, same_intent).action is StoreAction.REUSE
    assert plan_store(None, same_intent).action is StoreAction.SUPERSEDE
    assert plan_store(None, same_intent).existing is same_intent
    assert plan_store(None, None).action is StoreAction.CREATE


def test_only_an_active_record_can_be_superseded_and_it_keeps_its_content() -> None:
    old = _record("a")
    after = superseded(old, by="b", now=NOW + timedelta(seconds=1))
    assert (after.status, after.superseded_by, after.text) == (MemoryStatus.SUPERSEDED, "b", old.text)
    assert old.status is MemoryStatus.ACTIVE  # nothing rewritten in place
    with pytest.raises(MemoryNotActive):
        superseded(after, by="c", now=NOW)
    with pytest.raises(MemoryNotActive):
        plan_store(None, after)


def test_deprecation_is_idempotent_and_final_states_refuse_it() -> None:
    retired = deprecated(_record("a"), now=NOW)
    assert retired is not None and retired.status is MemoryStatus.DEPRECATED
    assert deprecated(retired, now=NOW) is None
    for status in (MemoryStatus.SUPERSEDED, MemoryStatus.DELETED):
        with pytest.raises(MemoryNotActive):
            deprecated(_record("x", status), now=NOW)


def test_lineage_is_ordered_oldest_first_by_links_not_by_input_order() -> None:
    a = _record("a", MemoryStatus.SUPERSEDED, superseded_by="b", row_id=3)
    b = _record("b", MemoryStatus.SUPERSEDED, supersedes="a", superseded_by="c", row_id=1)
    c = _record("c", supersedes="b", row_id=2)
    assert [r.memory_id for r in lineage_order([c, a, b])] == ["a", "b", "c"]


def _item(state: ReviewState = ReviewState.PENDING) -> ReviewItem:
    from services.common.vocabulary import Candidate, Sensitivity

    candidate = Candidate("k", MemoryType.PREFERENCE, Origin.OWNER, Sensitivity.NORMAL, 0.7, "x", "e", "t")
    return ReviewItem("r", "acme", "alice", Decision(candidate, Outcome.REVIEW, "p"), state, "e", "t", "c", NOW)


def test_a_review_verdict_is_final_and_repeating_it_is_harmless() -> None:
    item = _item()
    assert needs_resolution(item, Resolution.APPROVE)
    approved = resolved(item, Resolution.APPROVE, reviewer="rita", reason="ok", memory_id="m", now=NOW)
    assert (approved.state, approved.reviewer, approved.memory_id) == (ReviewState.APPROVED, "rita", "m")
    assert not needs_resolution(approved, Resolution.APPROVE)
    with pytest.raises(ReviewAlreadyResolved):
        needs_resolution(approved, Resolution.DENY)
    with pytest.raises(ReviewAlreadyResolved):
        needs_resolution(_item(ReviewState.DELETED), Resolution.APPROVE)


def test_an_outcome_survives_its_json_round_trip() -> None:
    outcome = ApplyOutcome(
        "evt-1",
        (
            AppliedDecision("k1", Outcome.STORE, memory_id="m1", superseded_memory_id="m0"),
            AppliedDecision("k2", Outcome.REVIEW, review_item_id="r1"),
            AppliedDecision("k3", Outcome.REJECT),
        ),
    )
    again = ApplyOutcome.from_json(outcome.to_json(), already_processed=True)
    assert again.applied == outcome.applied and again.already_processed
