"""An in-memory memory database for unit tests of the learning use case: just the repositories
`apply_learning` touches, with a transaction that publishes its writes only on `commit()`.

Each unit of work works on a copy of the committed state and replaces it at commit, so a unit
that raises leaves nothing behind, as a rolled-back PostgreSQL transaction would. It records the
lock calls it gets and can be told to fail when a given text is stored (a fault no validation
foresaw), to exercise the use case's isolation of one event.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from services.common.vocabulary import Decision
from services.memory.core.adapters.in_memory import RecordingMetrics
from services.memory.core.domain.audit import AuditEntry
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from services.memory.core.domain.review import ReviewItem
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.ports import CandidateRecord, Tuning, Vector


@dataclass
class State:
    memories: dict[str, MemoryRecord] = field(default_factory=dict)
    candidates: list[CandidateRecord] = field(default_factory=list)
    reviews: list[ReviewItem] = field(default_factory=list)
    audit: list[AuditEntry] = field(default_factory=list)
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    vectors: dict[str, Vector] = field(default_factory=dict)
    prefetched: list[list[tuple[str, str, str]]] = field(default_factory=list)


class _Memories:
    def __init__(self, state: State, poison: str) -> None:
        self._state, self._poison = state, poison

    def active_for_store(
        self, user: str, candidate_key: str, intent_key: str
    ) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        active = [m for m in self._state.memories.values() if m.user == user and m.status is MemoryStatus.ACTIVE]
        meaning = next((m for m in active if candidate_key and m.candidate_key == candidate_key), None)
        intent = next((m for m in active if intent_key and m.intent_key == intent_key), None)
        return meaning, intent

    def prefetch_active(self, keys: Sequence[tuple[str, str, str]]) -> None:
        self._state.prefetched.append(list(keys))

    def get(self, memory_id: str, *, lock: bool = False) -> MemoryRecord | None:
        return self._state.memories.get(memory_id)

    def add(self, record: MemoryRecord, *, with_source: bool = False) -> MemoryRecord:
        if self._poison and record.text == self._poison:
            raise RuntimeError("the fake database refuses this text")
        record.row_id = len(self._state.memories) + 1
        self._state.memories[record.memory_id] = record
        return record

    def set_status(
        self, memory_id: str, status: MemoryStatus, *, superseded_by: str | None, event_id: str, trace_id: str
    ) -> None:
        old = self._state.memories[memory_id]
        self._state.memories[memory_id] = replace(old, status=status, superseded_by=superseded_by or old.superseded_by)

    def set_supersedes(self, memory_id: str, supersedes: str | None) -> None:
        self._state.memories[memory_id] = replace(self._state.memories[memory_id], supersedes=supersedes)

    def add_source(self, memory_id: str, event_id: str, trace_id: str) -> bool:
        record = self._state.memories[memory_id]
        if event_id in record.source_event_ids:
            return False
        self._state.memories[memory_id] = replace(record, source_event_ids=(*record.source_event_ids, event_id))
        return True

    def restate(self, memory_id: str, stated_at: datetime) -> None:
        record = self._state.memories[memory_id]
        self._state.memories[memory_id] = replace(record, observed_at=max(record.stated_at, stated_at))

    def add_vector(self, memory_id: str, embedder: str, vector: Vector) -> None:
        self._state.vectors[memory_id] = vector


class _Appends:
    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def add(self, row: Any) -> None:
        self._rows.append(row)


class _Events:
    def __init__(self, state: State) -> None:
        self._state = state

    def get_many(self, event_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], datetime]]:
        epoch = datetime(2026, 1, 1, tzinfo=UTC)
        return {e: (self._state.events[e], epoch) for e in event_ids if e in self._state.events}

    def record(self, event_id: str, *, user: str, trace_id: str, outcome: dict[str, Any]) -> None:
        assert event_id not in self._state.events, "an event recorded twice"
        self._state.events[event_id] = outcome

    def forgotten_among(self, events: Sequence[tuple[str, datetime | None]]) -> list[str | None]:
        return [None for _ in events]


class FakeUnitOfWork:
    def __init__(self, db: FakeDatabase) -> None:
        self._db = db

    def __enter__(self) -> FakeUnitOfWork:
        self._work = copy.deepcopy(self._db.state)
        self.memories = _Memories(self._work, self._db.poison)
        self.candidates = _Appends(self._work.candidates)
        self.reviews = _Appends(self._work.reviews)
        self.audit = _Appends(self._work.audit)
        self.events = _Events(self._work)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    def commit(self) -> None:
        self._db.state = self._work
        self._db.commits += 1

    def lock_many(self, keys: Sequence[str]) -> None:
        self._db.locks.append(list(keys))

    def begin_batch(
        self,
        lock_keys: Sequence[str],
        event_ids: Sequence[str],
        events: Sequence[tuple[str, datetime | None]],
        store_keys: Sequence[tuple[str, str, str]],
    ) -> tuple[dict[str, tuple[dict[str, Any], datetime]], list[str | None]]:
        self.lock_many(lock_keys)
        found = self.events.get_many(event_ids)
        forgotten = self.events.forgotten_among(events)
        self.memories.prefetch_active(store_keys)
        return found, forgotten

    def defer_appends(self) -> None:
        return None


@dataclass
class FakeDatabase:
    state: State = field(default_factory=State)
    locks: list[list[str]] = field(default_factory=list)
    commits: int = 0
    poison: str = ""  # a text whose insert fails (a fault no validation foresaw)

    def uow(self, tenant: str) -> FakeUnitOfWork:
        return FakeUnitOfWork(self)


@dataclass
class CountingEmbedder:
    calls: list[list[str]] = field(default_factory=list)
    name: str = "counting"
    dim: int = 4

    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return np.full((len(texts), self.dim), 0.5, dtype=np.float32)


@dataclass
class RecordingEffects:
    changed: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    reviews: list[tuple[str, str]] = field(default_factory=list)

    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None:
        self.changed.append((tenant, tuple(users), tuple(memory_ids)))

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        self.reviews.append((user, event_id))


class SignedUnlessMarked:
    """A verifier that takes every decision as signed except those whose key starts with 'unsigned'."""

    def verify(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bool:
        return not decision.candidate.candidate_key.startswith("unsigned")


def ports(db: FakeDatabase, embedder: CountingEmbedder, effects: RecordingEffects) -> MemoryPorts:
    return MemoryPorts(
        uow=db.uow,  # type: ignore[arg-type]
        embedder=embedder,
        index=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        effects=effects,
        metrics=RecordingMetrics(),
        tuning=Tuning(),
        decisions=SignedUnlessMarked(),
        active=None,  # type: ignore[arg-type]
    )
