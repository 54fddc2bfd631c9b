"""The learning use case for a batch of events (`apply_learning_batch`) on an in-memory database:
one embed call and one transaction for the batch, locks in one sorted order, each event's own
result, and a refused or failing event that fails alone."""

from __future__ import annotations

from datetime import UTC, datetime

from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Sensitivity
from services.memory.core.domain.model import MemoryStatus
from services.memory.core.domain.outcome import ApplyOutcome
from services.memory.core.service.apply_learning import ApplyLearning, apply_learning, apply_learning_batch
from services.memory.core.service.decision_gate import DecisionNotSigned
from tests.unit.memory_fakes import CountingEmbedder, FakeDatabase, RecordingEffects, ports


def _event(event_id: str, *texts: str, user: str = "alice", intent: str = "", key: str = "") -> ApplyLearning:
    decisions = tuple(
        Decision(
            Candidate(
                candidate_key=key or f"key-{text}",
                type=MemoryType.PREFERENCE,
                origin=Origin.OWNER,
                sensitivity=Sensitivity.NORMAL,
                confidence=0.9,
                text=text,
                event_id=event_id,
                trace_id="ab" * 16,
                intent_key=intent,
            ),
            Outcome.STORE,
            "policy-v1",
        )
        for text in texts
    )
    return ApplyLearning(
        tenant="acme",
        user=user,
        event_id=event_id,
        trace_id="ab" * 16,
        actor="worker",
        decisions=decisions,
        event_time=datetime(2026, 12, 1, 9, int(event_id[-1]), tzinfo=UTC),
    )


def _active(db: FakeDatabase, intent: str) -> list[str]:
    return [m.text for m in db.state.memories.values() if m.intent_key == intent and m.status is MemoryStatus.ACTIVE]


def test_a_batch_is_one_embed_call_one_sorted_lock_call_and_one_commit_with_a_result_per_event() -> None:
    # Given three events of two users, two of them repeating one text, and one of them twice
    db, embedder, effects = FakeDatabase(), CountingEmbedder(), RecordingEffects()
    batch = [
        _event("evt-2", "likes tea", user="carol"),
        _event("evt-1", "likes tea", "after 10:00", intent="meetings"),
        _event("evt-2", "likes tea", user="carol"),
        _event("evt-3", "after 09:00", intent="meetings"),
    ]

    # When the batch is applied
    results = apply_learning_batch(batch, ports(db, embedder, effects))

    # Then memory embedded each distinct text once, in one call, and committed once
    assert embedder.calls == [["after 09:00", "after 10:00", "likes tea"]]
    assert db.commits == 1
    # Then every event and user lock was taken in one call, events before users, each sorted
    assert db.locks == [["event:evt-1", "event:evt-2", "event:evt-3", "user:alice", "user:carol"]]
    # Then each item has its own outcome; the repeat of evt-2 is a replay of its first outcome
    assert all(isinstance(r, ApplyOutcome) for r in results)
    first, _, repeat, later = results
    assert isinstance(first, ApplyOutcome) and isinstance(repeat, ApplyOutcome) and isinstance(later, ApplyOutcome)
    assert (first.already_processed, repeat.already_processed) == (False, True)
    assert repeat.applied == first.applied
    # Then the later statement of the intent superseded the earlier one: one active record
    assert _active(db, "meetings") == ["after 09:00"]
    assert sorted(db.state.events) == ["evt-1", "evt-2", "evt-3"]
    # Then the index and peers heard of the batch's memories once, after the commit
    assert len(effects.changed) == 1 and set(effects.changed[0][1]) == {"alice", "carol"}


def test_an_unsigned_event_is_refused_alone_before_anything_is_written_and_the_others_commit() -> None:
    # Given a batch whose middle event carries a decision policy did not sign
    db, embedder, effects = FakeDatabase(), CountingEmbedder(), RecordingEffects()
    batch = [_event("evt-1", "likes tea"), _event("evt-2", "likes red", key="unsigned-red"), _event("evt-3", "dogs")]

    # When the batch is applied
    results = apply_learning_batch(batch, ports(db, embedder, effects))

    # Then that event alone is refused (its text never embedded or stored); the others committed
    assert isinstance(results[1], DecisionNotSigned)
    assert [type(r) for r in (results[0], results[2])] == [ApplyOutcome, ApplyOutcome]
    assert embedder.calls == [["dogs", "likes tea"]]
    assert sorted(db.state.events) == ["evt-1", "evt-3"]
    assert "likes red" not in {m.text for m in db.state.memories.values()}


def test_a_replayed_batch_writes_nothing_and_answers_every_event_from_the_ledger() -> None:
    # Given a batch applied once
    db, embedder, effects = FakeDatabase(), CountingEmbedder(), RecordingEffects()
    batch = [_event("evt-1", "likes tea"), _event("evt-2", "after 10:00", intent="meetings")]
    first = apply_learning_batch(batch, ports(db, embedder, effects))
    before = (len(db.state.memories), len(db.state.candidates), len(db.state.audit), db.commits)

    # When the same batch is applied again
    again = apply_learning_batch(batch, ports(db, embedder, effects))

    # Then each event returns its stored outcome as a replay and nothing is written or committed
    assert [r.already_processed for r in again if isinstance(r, ApplyOutcome)] == [True, True]
    assert [r.applied for r in again if isinstance(r, ApplyOutcome)] == [
        r.applied for r in first if isinstance(r, ApplyOutcome)
    ]
    assert (len(db.state.memories), len(db.state.candidates), len(db.state.audit), db.commits) == before


def test_a_batch_failing_for_an_unforeseen_reason_is_applied_event_by_event_and_only_the_culprit_fails() -> None:
    # Given a database that fails to store one text of the batch (nothing validation could see)
    db, embedder, effects = FakeDatabase(poison="breaks the database"), CountingEmbedder(), RecordingEffects()
    batch = [_event("evt-1", "likes tea"), _event("evt-2", "breaks the database"), _event("evt-3", "dogs")]

    # When the batch is applied
    results = apply_learning_batch(batch, ports(db, embedder, effects))

    # Then the batch's transaction left nothing; each event then ran alone and only the culprit failed (INTERNAL)
    assert [type(r).__name__ for r in results] == ["ApplyOutcome", "MemloopError", "ApplyOutcome"]
    assert getattr(results[1], "reason", "") == "INTERNAL"
    assert sorted(db.state.events) == ["evt-1", "evt-3"] and db.commits == 2


def test_a_single_apply_learning_is_a_batch_of_one_and_raises_its_refusal() -> None:
    # Given an unsigned event
    db, embedder, effects = FakeDatabase(), CountingEmbedder(), RecordingEffects()
    the_ports = ports(db, embedder, effects)

    # When it is applied alone, then it raises as ApplyLearning always did, having written nothing
    try:
        apply_learning(_event("evt-1", "likes red", key="unsigned-red"), the_ports)
    except DecisionNotSigned:
        pass
    else:  # pragma: no cover - the assertion of this test
        raise AssertionError("an unsigned decision was applied")
    assert db.commits == 0 and db.locks == []
    # When a signed one is applied alone, then it takes the same path: its locks, one commit
    outcome = apply_learning(_event("evt-2", "likes tea"), the_ports)
    assert not outcome.already_processed and db.locks == [["event:evt-2", "user:alice"]] and db.commits == 1
