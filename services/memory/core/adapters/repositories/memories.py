"""Memory rows, their provenance and their vectors.

Every query filters on the tenant explicitly even though row-level security already does:
two independent guards, so neither a policy mistake nor a query mistake alone leaks a tenant.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Select, Text, any_, bindparam, func, insert, literal, or_, select, update
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert

from services.common.vocabulary import MemoryType, Origin
from services.memory.core.adapters.repositories.base import Db, Statement, unnest_insert
from services.memory.core.adapters.repositories.memory_writes import PendingMemoryWrites
from services.memory.core.adapters.tables import memories as m
from services.memory.core.adapters.tables import memory_sources as ms
from services.memory.core.adapters.tables import memory_vectors as mv
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from services.memory.core.service.ports import MemoryFilter, Vector

_ACTIVE = MemoryStatus.ACTIVE.value
_DELETED = MemoryStatus.DELETED.value
RECORD_COLUMNS = """
    m.memory_id, m.tenant, m.user_id, m.type, m.text, m.status, m.confidence, m.origin, m.candidate_key,
    m.trace_id, m.policy_version, m.created_at, m.updated_at, m.intent_key, m.supersedes, m.superseded_by,
    m.event_id, m.row_id, m.change_seq, m.observed_at,
    coalesce((SELECT array_agg(s.event_id ORDER BY s.added_at, s.event_id) FROM memory_sources s
              WHERE s.tenant = m.tenant AND s.memory_id = m.memory_id), '{}') AS sources
"""
"""Every column of a `memories` row (alias m) and its sources, oldest first, as `record_from_row` reads them."""
_PREFETCH = f"""
    SELECT {RECORD_COLUMNS}
    FROM memories m
    WHERE m.tenant = %(tenant)s AND m.status = 'active'
      AND ((m.user_id, m.candidate_key) IN (SELECT * FROM unnest(%(meaning_users)s::text[], %(meanings)s::text[]))
           OR (m.user_id, m.intent_key) IN (SELECT * FROM unnest(%(intent_users)s::text[], %(intents)s::text[])))
    ORDER BY m.row_id
    FOR UPDATE OF m
"""
_VECTOR_TYPES = {"memory_id": "text", "embedder": "text", "tenant": "text", "dim": "int", "vector": "bytea"}
_VECTOR_CONFLICT = "ON CONFLICT (memory_id, embedder) DO NOTHING"


class SqlMemoryRepository:
    def __init__(self, db: Db) -> None:
        self._db = db
        self._tenant = db.tenant
        self._pending = PendingMemoryWrites(db)  # used only while the unit of work defers (a batch)

    def get(self, memory_id: str, *, lock: bool = False) -> MemoryRecord | None:
        query = self._select().where(m.c.memory_id == memory_id)
        found = self._records(query.with_for_update() if lock else query)
        return found[0] if found else None

    def active_for_store(
        self, user: str, candidate_key: str, intent_key: str
    ) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        """The active record of the same meaning and the one of the same intent, locked, in ONE
        statement (a STORE needs both answers; two lookups were two round trips)."""
        if not candidate_key and not intent_key:
            return None, None
        if self._db.deferring and self._pending.known(user, candidate_key, intent_key):
            return self._pending.active(user, candidate_key, intent_key)
        matches = []
        if candidate_key:
            matches.append(m.c.candidate_key == candidate_key)
        if intent_key:
            matches.append(m.c.intent_key == intent_key)
        found = self._records(self._active(user).where(or_(*matches)).order_by(m.c.row_id).with_for_update())
        same_meaning = next((r for r in found if candidate_key and r.candidate_key == candidate_key), None)
        same_intent = next((r for r in found if intent_key and r.intent_key == intent_key), None)
        if self._db.deferring:
            self._pending.remember([(user, candidate_key, intent_key)], found)
        return same_meaning, same_intent

    def prefetch_active(self, keys: Sequence[tuple[str, str, str]]) -> None:
        """Lock and remember the active records of many (user, meaning, intent) at once, in ONE
        statement, so that a deferring batch's `active_for_store` calls need no round trip each
        (`memory_writes` says how the batch's own writes keep the answers current)."""
        statement = self.prefetch_statement(keys)
        if statement is not None:
            self.remember_prefetched(keys, self._db.fetch([statement])[0])

    def prefetch_statement(self, keys: Sequence[tuple[str, str, str]]) -> Statement | None:
        """`prefetch_active`'s statement (None when there is nothing to read or nothing defers)."""
        if not self._db.deferring:
            return None
        meanings = sorted({(user, key) for user, key, _ in keys if key})
        intents = sorted({(user, key) for user, _, key in keys if key})
        if not meanings and not intents:
            return None
        self._flush_pending()  # the read must see this unit's queued writes
        return _PREFETCH, {
            "tenant": self._tenant,
            "meaning_users": [user for user, _ in meanings],
            "meanings": [key for _, key in meanings],
            "intent_users": [user for user, _ in intents],
            "intents": [key for _, key in intents],
        }

    def remember_prefetched(self, keys: Sequence[tuple[str, str, str]], rows: Sequence[Any]) -> None:
        found = [record_from_row(row, tuple(row.sources or ())) for row in rows]
        self._pending.remember(keys, found, overwrite=False)

    def active_by_intents(self, user: str, intent_keys: Sequence[str]) -> list[MemoryRecord]:
        return self._records(self._active(user).where(m.c.intent_key.in_(list(intent_keys))))

    def active_by_row_ids(self, user: str, row_ids: Sequence[int]) -> list[MemoryRecord]:
        return self._records(self._active(user).where(m.c.row_id.in_(list(row_ids))))

    def add(self, record: MemoryRecord, *, with_source: bool = False) -> MemoryRecord:
        """Insert the row; `with_source` also records its first source event (the record's own
        event and trace) in the same statement, one round trip for both. A deferring unit of work
        queues both (`row_id` and `change_seq` stay 0 until the commit)."""
        if self._db.deferring:
            self._pending.add(record, self._row(record), with_source=with_source)
            return record
        inserted = insert(m).values(**self._row(record)).returning(m.c.memory_id, m.c.row_id, m.c.change_seq)
        if with_source:
            new_row = inserted.cte("new_row")
            source = insert(ms).from_select(
                [ms.c.memory_id, ms.c.event_id, ms.c.tenant, ms.c.trace_id],
                select(
                    new_row.c.memory_id,
                    literal(record.event_id, Text),
                    literal(self._tenant, Text),
                    literal(record.trace_id, Text),
                ),
            )
            statement: Any = select(new_row.c.row_id, new_row.c.change_seq).add_cte(source.cte("new_source"))
        else:
            statement = inserted
        row = self._db.execute(statement).one()
        record.row_id, record.change_seq = int(row.row_id), int(row.change_seq)
        return record

    def _row(self, record: MemoryRecord) -> dict[str, Any]:
        return dict(
            memory_id=record.memory_id,
            tenant=self._tenant,
            user_id=record.user,
            type=record.type.value,
            text=record.text,
            intent_key=record.intent_key,
            status=record.status.value,
            supersedes=record.supersedes,
            superseded_by=record.superseded_by,
            confidence=record.confidence,
            origin=record.origin.value,
            candidate_key=record.candidate_key,
            event_id=record.event_id,
            trace_id=record.trace_id,
            policy_version=record.policy_version,
            status_event_id=record.event_id,
            status_trace_id=record.trace_id,
            observed_at=record.stated_at,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    def set_status(
        self, memory_id: str, status: MemoryStatus, *, superseded_by: str | None, event_id: str, trace_id: str
    ) -> None:
        if self._db.deferring:
            self._pending.set_status(
                memory_id, status, superseded_by=superseded_by, event_id=event_id, trace_id=trace_id
            )
            return
        values: dict[str, Any] = {"status": status.value, "status_event_id": event_id, "status_trace_id": trace_id}
        if superseded_by is not None:
            values["superseded_by"] = superseded_by
        self._db.execute(update(m).where(m.c.tenant == self._tenant, m.c.memory_id == memory_id).values(**values))

    def set_supersedes(self, memory_id: str, supersedes: str | None) -> None:
        """Re-point a record's back link when a late statement is slotted into its history."""
        if self._db.deferring:
            self._pending.set_supersedes(memory_id, supersedes)
            return
        self._db.execute(
            update(m).where(m.c.tenant == self._tenant, m.c.memory_id == memory_id).values(supersedes=supersedes)
        )

    def mark_deleted(self, memory_ids: Sequence[str], *, event_id: str, trace_id: str) -> int:
        """Forget rows in place: status `deleted`, text and candidate key scrubbed, links kept.

        One statement for any number of rows; the change trigger still fires per row, so every
        replica's feed sees each one leave the active set. Returns how many rows changed.
        """
        if not memory_ids:
            return 0
        self._pending.forget_view()
        self._flush_pending()
        ids = bindparam("ids", list(memory_ids), type_=ARRAY(Text))  # one array parameter, not one per id
        result = self._db.execute(
            update(m)
            .where(m.c.tenant == self._tenant, m.c.memory_id == any_(ids), m.c.status != _DELETED)
            .values(status=_DELETED, text="", candidate_key="", status_event_id=event_id, status_trace_id=trace_id)
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def restate(self, memory_id: str, stated_at: datetime) -> None:
        """Move a memory's statement time forward to a repeat's (never backward)."""
        if self._db.deferring:
            self._pending.restate(memory_id, stated_at)
            return
        self._db.execute(
            update(m)
            .where(m.c.tenant == self._tenant, m.c.memory_id == memory_id)
            .values(observed_at=func.greatest(func.coalesce(m.c.observed_at, m.c.created_at), stated_at))
        )

    def add_source(self, memory_id: str, event_id: str, trace_id: str) -> bool:
        if self._db.deferring:
            queued = self._pending.add_source(memory_id, event_id, trace_id)
            if queued is not None:
                return queued
            self._flush_pending()
        result = self._db.execute(
            pg_insert(ms)
            .values(memory_id=memory_id, event_id=event_id, tenant=self._tenant, trace_id=trace_id)
            .on_conflict_do_nothing(index_elements=[ms.c.memory_id, ms.c.event_id])
            .returning(ms.c.memory_id)
        )
        return result.first() is not None

    def add_vector(self, memory_id: str, embedder: str, vector: Vector) -> None:
        row = {
            "memory_id": memory_id,
            "embedder": embedder,
            "tenant": self._tenant,
            "dim": int(vector.shape[0]),
            "vector": vector.astype("<f4").tobytes(),
        }
        if self._db.deferring:
            self._db.defer("memory_vectors", row)
        else:
            self._write_vectors([row])

    def flush(self) -> None:
        self._db.run(self.statements())

    def statements(self) -> list[Statement]:
        """The queued rows (`memory_writes`), then the queued vectors, as one INSERT each."""
        return self._pending.statements() + unnest_insert(
            "memory_vectors", _VECTOR_TYPES, self._db.take("memory_vectors"), suffix=_VECTOR_CONFLICT
        )

    def _flush_pending(self) -> None:
        if not self._pending.empty:
            self._db.run(self._pending.statements())

    def _write_vectors(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._db.execute(pg_insert(mv).on_conflict_do_nothing(index_elements=[mv.c.memory_id, mv.c.embedder]), rows)

    def page(self, where: MemoryFilter, *, after_row_id: int, limit: int) -> list[MemoryRecord]:
        query = self._select().where(m.c.row_id > after_row_id)
        if where.user:
            query = query.where(m.c.user_id == where.user)
        if where.statuses:
            query = query.where(m.c.status.in_(sorted(s.value for s in where.statuses)))
        if where.types:
            query = query.where(m.c.type.in_(sorted(t.value for t in where.types)))
        if where.intent_key:
            query = query.where(m.c.intent_key == where.intent_key)
        if where.source_event_id:
            sourced = select(ms.c.memory_id).where(ms.c.tenant == self._tenant, ms.c.event_id == where.source_event_id)
            query = query.where(m.c.memory_id.in_(sourced))
        return self._records(query.order_by(m.c.row_id).limit(limit))

    def chain(self, memory_id: str) -> list[MemoryRecord]:
        """Every record linked to `memory_id` by supersession, either way (a recursive walk)."""
        start = select(m.c.memory_id).where(m.c.tenant == self._tenant, m.c.memory_id == memory_id)
        linked = start.cte("linked", recursive=True)
        step = select(m.c.memory_id).where(
            m.c.tenant == self._tenant,
            or_(m.c.supersedes == linked.c.memory_id, m.c.superseded_by == linked.c.memory_id),
        )
        linked = linked.union(step)
        return self._records(self._select().where(m.c.memory_id.in_(select(linked.c.memory_id))))

    def _select(self) -> Select[Any]:
        """Every column and the row's source events (oldest first) as one array: one round trip."""
        sources = (
            select(func.array_agg(aggregate_order_by(ms.c.event_id, ms.c.added_at, ms.c.event_id)))
            .where(ms.c.tenant == self._tenant, ms.c.memory_id == m.c.memory_id)
            .scalar_subquery()
        )
        return select(m, sources.label("sources")).where(m.c.tenant == self._tenant)

    def _active(self, user: str) -> Select[Any]:
        return self._select().where(m.c.user_id == user, m.c.status == _ACTIVE)

    def _records(self, query: Select[Any]) -> list[MemoryRecord]:
        self._flush_pending()  # nothing reads around a queued write
        return [record_from_row(row, tuple(row.sources or ())) for row in self._db.execute(query).all()]


def record_from_row(row: Any, sources: tuple[str, ...]) -> MemoryRecord:
    """A `memories` row (every column selected) and its provenance, as a domain record."""
    return MemoryRecord(
        memory_id=row.memory_id,
        tenant=row.tenant,
        user=row.user_id,
        type=MemoryType(row.type),
        text=row.text,
        status=MemoryStatus(row.status),
        confidence=float(row.confidence),
        origin=Origin(row.origin),
        candidate_key=row.candidate_key,
        trace_id=row.trace_id,
        policy_version=row.policy_version,
        created_at=row.created_at,
        updated_at=row.updated_at,
        intent_key=row.intent_key,
        source_event_ids=sources,
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
        event_id=row.event_id,
        row_id=int(row.row_id),
        change_seq=int(row.change_seq),
        observed_at=row.observed_at,
    )
