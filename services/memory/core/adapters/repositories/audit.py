"""Audit rows: insert and read only (the app role holds no UPDATE or DELETE on the table).

A free-text `reason` in an entry's detail (a reviewer's or operator's words) is never written into
the append-only row: it goes to `operator_notes`, tied to the memory, review item or procedure it
is about, and the row keeps only `reason_note` (the note's id). Reads put the text back while the
note exists; a deletion removes the note with what it was about, and the reason is gone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select, text

from services.memory.core.adapters.repositories.base import Db
from services.memory.core.adapters.tables import audit_events as a
from services.memory.core.adapters.tables import operator_notes as n
from services.memory.core.domain.audit import AuditEntry, AuditEvent

_ARRAY_COLUMNS = ("audit_id", "action", "event_id", "trace_id", "memory_id", "actor")
_ADD_MANY = text(
    """
    INSERT INTO audit_events (audit_id, tenant, action, event_id, trace_id, memory_id, actor, detail)
    SELECT r.audit_id, :tenant, r.action, r.event_id, r.trace_id, r.memory_id, r.actor, CAST(r.detail AS jsonb)
    FROM unnest(CAST(:audit_id AS text[]), CAST(:action AS text[]), CAST(:event_id AS text[]),
                CAST(:trace_id AS text[]), CAST(:memory_id AS text[]), CAST(:actor AS text[]),
                CAST(:detail AS text[])) WITH ORDINALITY
         AS r(audit_id, action, event_id, trace_id, memory_id, actor, detail, position)
    ORDER BY r.position
    """
)

_ADD_PER_MEMORY = text(
    """
    INSERT INTO audit_events (audit_id, tenant, action, event_id, trace_id, memory_id, actor, detail)
    SELECT replace(gen_random_uuid()::text, '-', ''), :tenant, :action, :event_id, :trace_id, m.memory_id, :actor,
           CAST(:detail AS jsonb)
    FROM unnest(CAST(:memory_ids AS text[])) WITH ORDINALITY AS m(memory_id, position)
    ORDER BY m.position
    """
)


class SqlAuditRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def add(self, entry: AuditEntry) -> None:
        if self._db.deferring:
            self._db.defer("audit_events", self._row(entry))
        else:
            self._db.execute(insert(a).values(**self._row(entry)))

    def add_many(self, entries: Sequence[AuditEntry]) -> None:
        """One INSERT over arrays, in the entries' order (a forget of a large user writes one row
        per memory: ten thousand rows are still one statement and one round trip)."""
        if not entries:
            return
        self.flush()  # after what was queued before, so `seq` keeps the order of the calls
        self._insert_rows([self._row(entry) for entry in entries])

    def flush(self) -> None:
        """The queued entries (see `Db.deferring`) as one INSERT, in the order they were added."""
        self._insert_rows(self._db.take("audit_events"))

    def _insert_rows(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        self._db.execute(
            _ADD_MANY,
            {
                "tenant": self._db.tenant,
                **{column: [row[column] for row in rows] for column in _ARRAY_COLUMNS},
                "detail": [json.dumps(row["detail"]) for row in rows],
            },
        )

    def add_per_memory(self, entry: AuditEntry, memory_ids: Sequence[str]) -> None:
        """`entry` once per memory id, in order, as one INSERT over one array: the ids are the only
        thing that varies (a forget's ten thousand `memory.deleted` rows). No free text allowed."""
        if "reason" in entry.detail:
            raise ValueError("a per-memory audit entry cannot carry a free-text reason")
        if not memory_ids:
            return
        self.flush()
        self._db.execute(
            _ADD_PER_MEMORY,
            {
                "tenant": self._db.tenant,
                "action": entry.action.value,
                "event_id": entry.event_id,
                "trace_id": entry.trace_id,
                "actor": entry.actor,
                "detail": json.dumps(entry.detail),
                "memory_ids": list(memory_ids),
            },
        )

    def _row(self, entry: AuditEntry) -> dict[str, Any]:
        return {
            "audit_id": uuid.uuid4().hex,
            "tenant": self._db.tenant,
            "action": entry.action.value,
            "event_id": entry.event_id,
            "trace_id": entry.trace_id,
            "memory_id": entry.memory_id,
            "actor": entry.actor,
            "detail": self._without_free_text(entry),
        }

    def _without_free_text(self, entry: AuditEntry) -> dict[str, Any]:
        detail = dict(entry.detail)
        reason = detail.pop("reason", "")
        if not isinstance(reason, str) or not reason:
            return detail
        note_id = uuid.uuid4().hex
        self._db.execute(
            insert(n).values(
                note_id=note_id,
                tenant=self._db.tenant,
                memory_id=entry.memory_id,
                review_item_id=str(detail.get("review_item_id", "")),
                procedure_id=str(detail.get("procedure_id", "")),
                text=reason,
            )
        )
        return {**detail, "reason_note": note_id}

    def page(self, *, event_id: str, memory_id: str, after_seq: int, limit: int) -> list[AuditEvent]:
        self.flush()
        query = (
            select(a, n.c.text.label("note_text"))
            .select_from(a.outerjoin(n, (n.c.tenant == a.c.tenant) & (n.c.note_id == a.c.detail["reason_note"].astext)))
            .where(a.c.tenant == self._db.tenant, a.c.seq > after_seq)
        )
        if event_id:
            query = query.where(a.c.event_id == event_id)
        if memory_id:
            query = query.where(a.c.memory_id == memory_id)
        return [_event(row) for row in self._db.execute(query.order_by(a.c.seq).limit(limit)).all()]


def _event(row: Any) -> AuditEvent:
    detail = dict(row.detail)
    if row.note_text is not None:
        detail["reason"] = row.note_text
    return AuditEvent(
        audit_id=row.audit_id,
        seq=int(row.seq),
        tenant=row.tenant,
        action=row.action,
        event_id=row.event_id,
        trace_id=row.trace_id,
        memory_id=row.memory_id,
        actor=row.actor,
        detail=detail,
        created_at=row.created_at,
    )
