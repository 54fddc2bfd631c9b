"""A learning batch's memory writes, held back and sent as a few set-based statements.

Before, every STORE decision cost its own round trips: the locked read of the active records of
its meaning and intent, the insert of the new row with its first source, and an update of the
record it superseded or reinforced. A batch of 32 events was some fifty statements, each one a
wait for a PostgreSQL backend on a busy machine. With the unit of work deferring (`Db.deferring`):

- `prefetch` reads, locked (FOR UPDATE), the active records of every (user, meaning) and (user,
  intent) the batch's STOREs name, in ONE statement; `active_for_store` then answers from it, and
  this batch's own writes keep it current (a record stored by one event is the active record the
  next event of the same intent meets; one superseded leaves it).
- New rows, their sources and every change to an existing row are queued; `statements` gives the
  changes to existing rows as one UPDATE (first: a superseded record must stop being active
  before its successor is inserted, for the one-active indexes), then the new rows as one INSERT,
  then their sources as one INSERT; the commit sends them with the batch's other appends and the
  COMMIT in one round trip. A row created and superseded in the same batch is inserted in its
  final state, links and all (the link constraints are deferred to the commit).
- Any read of the memories table flushes first, so nothing ever reads around a queued write.

The guarantees are the database's, as before: the rows met are locked until the commit, and a
lost race (another writer inserted an active record of the same intent) still fails on the
one-active index, now at the flush, as SupersessionConflict, and the batch is retried whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from services.memory.core.adapters.repositories.base import Db, Statement, unnest_insert
from services.memory.core.domain.model import MemoryRecord, MemoryStatus

_UNSET: Any = object()
_UPDATE_MANY = """
    UPDATE memories m SET
        status = coalesce(u.status, m.status),
        superseded_by = coalesce(u.superseded_by, m.superseded_by),
        status_event_id = coalesce(u.status_event_id, m.status_event_id),
        status_trace_id = coalesce(u.status_trace_id, m.status_trace_id),
        observed_at = CASE WHEN u.stated_at IS NULL THEN m.observed_at
                           ELSE greatest(coalesce(m.observed_at, m.created_at), u.stated_at) END,
        supersedes = CASE WHEN u.relink THEN u.supersedes ELSE m.supersedes END
    FROM unnest(%(ids)s::text[], %(status)s::text[], %(superseded_by)s::text[], %(status_event_id)s::text[],
                %(status_trace_id)s::text[], %(stated_at)s::timestamptz[], %(relink)s::bool[],
                %(supersedes)s::text[])
         AS u(memory_id, status, superseded_by, status_event_id, status_trace_id, stated_at, relink, supersedes)
    WHERE m.tenant = %(tenant)s AND m.memory_id = u.memory_id
"""
_MEMORY_TYPES = {
    "memory_id": "text",
    "tenant": "text",
    "user_id": "text",
    "type": "text",
    "text": "text",
    "intent_key": "text",
    "status": "text",
    "supersedes": "text",
    "superseded_by": "text",
    "confidence": "float8",
    "origin": "text",
    "candidate_key": "text",
    "event_id": "text",
    "trace_id": "text",
    "policy_version": "text",
    "status_event_id": "text",
    "status_trace_id": "text",
    "observed_at": "timestamptz",
    "created_at": "timestamptz",
    "updated_at": "timestamptz",
}
_SOURCE_TYPES = {"memory_id": "text", "event_id": "text", "tenant": "text", "trace_id": "text"}
_SOURCE_CONFLICT = "ON CONFLICT (memory_id, event_id) DO NOTHING"
_UPDATE_FIELDS = ("status", "superseded_by", "status_event_id", "status_trace_id", "stated_at", "supersedes")


class PendingMemoryWrites:
    """The queue and the batch's view of active records; one per unit of work (not thread-safe)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._inserts: dict[str, dict[str, Any]] = {}  # memory_id -> the row as it will be inserted
        self._sources: dict[tuple[str, str], dict[str, Any]] = {}  # (memory_id, event_id) -> row
        self._updates: dict[str, dict[str, Any]] = {}  # memory_id -> changed fields of an existing row
        self._by_meaning: dict[tuple[str, str], MemoryRecord | None] = {}
        self._by_intent: dict[tuple[str, str], MemoryRecord | None] = {}

    @property
    def empty(self) -> bool:
        return not (self._inserts or self._sources or self._updates)

    # --- the batch's view of active records ---------------------------------------------------

    def known(self, user: str, candidate_key: str, intent_key: str) -> bool:
        return (not candidate_key or (user, candidate_key) in self._by_meaning) and (
            not intent_key or (user, intent_key) in self._by_intent
        )

    def active(self, user: str, candidate_key: str, intent_key: str) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        meaning = self._by_meaning.get((user, candidate_key)) if candidate_key else None
        intent = self._by_intent.get((user, intent_key)) if intent_key else None
        return meaning, intent

    def remember(
        self, asked: Iterable[tuple[str, str, str]], found: Iterable[MemoryRecord], *, overwrite: bool = True
    ) -> None:
        """What a locked read answered for (user, meaning, intent) triples: the record or none."""
        found = list(found)
        for user, candidate_key, intent_key in asked:
            if candidate_key and (overwrite or (user, candidate_key) not in self._by_meaning):
                self._by_meaning[(user, candidate_key)] = next(
                    (r for r in found if r.user == user and r.candidate_key == candidate_key), None
                )
            if intent_key and (overwrite or (user, intent_key) not in self._by_intent):
                self._by_intent[(user, intent_key)] = next(
                    (r for r in found if r.user == user and r.intent_key == intent_key), None
                )

    def _cached(self, memory_id: str) -> list[MemoryRecord]:
        return [
            r
            for r in (*self._by_meaning.values(), *self._by_intent.values())
            if r is not None and r.memory_id == memory_id
        ]

    def _evict(self, memory_id: str) -> None:
        for view in (self._by_meaning, self._by_intent):
            for key, record in view.items():
                if record is not None and record.memory_id == memory_id:
                    view[key] = None

    def forget_view(self) -> None:
        """After a write the view cannot follow (a forget): the next lookups read the database."""
        self._by_meaning.clear()
        self._by_intent.clear()

    # --- queued writes --------------------------------------------------------------------------

    def add(self, record: MemoryRecord, row: dict[str, Any], *, with_source: bool) -> None:
        self._inserts[record.memory_id] = row
        if with_source:
            self._queue_source(record.memory_id, record.event_id, record.trace_id)
        if record.status is MemoryStatus.ACTIVE:
            if record.candidate_key:
                self._by_meaning[(record.user, record.candidate_key)] = record
            if record.intent_key:
                self._by_intent[(record.user, record.intent_key)] = record

    def add_source(self, memory_id: str, event_id: str, trace_id: str) -> bool | None:
        """Whether the source is new, or None when this batch does not know the record's sources."""
        records = self._cached(memory_id)
        if not records and memory_id not in self._inserts:
            return None
        known = set(records[0].source_event_ids) if records else set()
        if event_id in known or (memory_id, event_id) in self._sources:
            return False
        self._queue_source(memory_id, event_id, trace_id)
        for record in records:
            record.source_event_ids = (*record.source_event_ids, event_id)
        return True

    def _queue_source(self, memory_id: str, event_id: str, trace_id: str) -> None:
        self._sources[(memory_id, event_id)] = {
            "memory_id": memory_id,
            "event_id": event_id,
            "tenant": self._db.tenant,
            "trace_id": trace_id,
        }

    def set_status(
        self, memory_id: str, status: MemoryStatus, *, superseded_by: str | None, event_id: str, trace_id: str
    ) -> None:
        changes: dict[str, Any] = {"status": status.value, "status_event_id": event_id, "status_trace_id": trace_id}
        if superseded_by is not None:
            changes["superseded_by"] = superseded_by
        self._change(memory_id, changes)
        if status is not MemoryStatus.ACTIVE:
            self._evict(memory_id)

    def restate(self, memory_id: str, stated_at: datetime) -> None:
        """Move the statement time forward (never backward), here and in the batch's view."""
        row = self._inserts.get(memory_id)
        if row is not None:
            row["observed_at"] = max(row["observed_at"], stated_at)
        else:
            queued = self._updates.get(memory_id, {}).get("stated_at")
            self._change(memory_id, {"stated_at": stated_at if queued is None else max(queued, stated_at)})
        for record in self._cached(memory_id):
            record.observed_at = max(record.stated_at, stated_at)

    def set_supersedes(self, memory_id: str, supersedes: str | None) -> None:
        self._change(memory_id, {"supersedes": supersedes})
        for record in self._cached(memory_id):
            record.supersedes = supersedes

    def _change(self, memory_id: str, changes: dict[str, Any]) -> None:
        row = self._inserts.get(memory_id)
        if row is not None:  # created in this batch: inserted in its final state
            row.update({k: v for k, v in changes.items() if k != "stated_at"})
        else:
            self._updates.setdefault(memory_id, {}).update(changes)

    def statements(self) -> list[Statement]:
        """Takes the queue: changes to existing rows, then new rows, then their sources (at most
        three statements, sent in one round trip by `Db.run`)."""
        updates, inserts, sources = self._updates, self._inserts, self._sources
        self._updates, self._inserts, self._sources = {}, {}, {}
        out: list[Statement] = []
        if updates:
            ids = list(updates)
            params: dict[str, Any] = {"tenant": self._db.tenant, "ids": ids}
            for name in _UPDATE_FIELDS:
                values = [updates[i].get(name, _UNSET) for i in ids]
                params[name] = [None if v is _UNSET else v for v in values]
                if name == "supersedes":
                    params["relink"] = [v is not _UNSET for v in values]
            out.append((_UPDATE_MANY, params))
        out += unnest_insert("memories", _MEMORY_TYPES, list(inserts.values()))
        out += unnest_insert("memory_sources", _SOURCE_TYPES, list(sources.values()), suffix=_SOURCE_CONFLICT)
        return out
