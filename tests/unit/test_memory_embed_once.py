"""A worker batch reaches memory's model once (issue 15): BatchFindConflicts embeds every candidate of
every user in one model call, and the BatchApplyLearning that stores them finds those vectors and
runs the model not at all. With the model behind the service's own BatchingEmbedder, as bootstrap
wires it, and a counting model in place of MiniLM."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Sensitivity
from services.memory.core.adapters.embed_batcher import BatchingEmbedder
from services.memory.core.domain.model import MemoryRecord
from services.memory.core.domain.outcome import ApplyOutcome
from services.memory.core.service.apply_learning import ApplyLearning, apply_learning_batch
from services.memory.core.service.ports import Vector
from services.memory.core.service.retrieval import find_conflicts_many
from tests.unit.memory_fakes import CountingEmbedder, FakeDatabase, RecordingEffects, ports


class _EmptyIndex:
    def search(
        self, tenant: str, user: str, query: Vector, k: int, types: frozenset[MemoryType]
    ) -> list[tuple[int, float]]:
        return []


class _NoActive:
    def active_for_conflicts(self, tenant: str, intents: object, hits: object) -> list[MemoryRecord]:
        return []


def _candidate(event_id: str, text: str) -> Candidate:
    return Candidate(
        candidate_key=f"key-{text}",
        type=MemoryType.PREFERENCE,
        origin=Origin.OWNER,
        sensitivity=Sensitivity.NORMAL,
        confidence=0.9,
        text=text,
        event_id=event_id,
        trace_id="ab" * 16,
    )


def test_a_worker_batch_of_n_texts_is_one_model_call_for_conflicts_and_apply_together() -> None:
    # Given a worker batch: four events of three users, five candidate texts, one of them rejected by policy
    events = {
        ("alice", "evt-1"): ["likes tea", "after 10:00"],
        ("bob", "evt-2"): ["works remotely"],
        ("carol", "evt-3"): ["vegan"],
        ("carol", "evt-4"): ["password is hunter2"],
    }
    model = CountingEmbedder()
    db = FakeDatabase()
    memory = replace(ports(db, model, RecordingEffects()), embedder=BatchingEmbedder(model))
    memory = replace(memory, index=_EmptyIndex(), active=_NoActive())  # type: ignore[arg-type]
    users: dict[str, list[Candidate]] = {}
    for (user, event_id), texts in events.items():
        users.setdefault(user, []).extend(_candidate(event_id, t) for t in texts)

    # When the worker asks for the conflicts of every candidate in one BatchFindConflicts
    find_conflicts_many("acme", list(users.items()), memory)
    # Then the model ran once, on every candidate text
    assert [sorted(call) for call in model.calls] == [sorted(t for texts in events.values() for t in texts)]

    # When the batch is applied in one BatchApplyLearning (the password refused by policy: not stored)
    batch = [
        ApplyLearning(
            tenant="acme",
            user=user,
            event_id=event_id,
            trace_id="ab" * 16,
            actor="worker",
            decisions=tuple(
                Decision(_candidate(event_id, t), Outcome.REJECT if "password" in t else Outcome.STORE, "policy-v1")
                for t in texts
            ),
            event_time=datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
        )
        for (user, event_id), texts in events.items()
    ]
    results = apply_learning_batch(batch, memory)

    # Then every event is applied and the model did not run again: each text reached it exactly once
    assert all(isinstance(r, ApplyOutcome) and not r.already_processed for r in results)
    assert len(model.calls) == 1
    assert sorted(m.text for m in db.state.memories.values()) == ["after 10:00", "likes tea", "vegan", "works remotely"]
