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

from services.memory.core.adapters.repositories.base import Db, Statement, unnest_insert
from services.memory.core.adapters.tables import audit_events as a
from services.memory.core.adapters.tables import operator_notes as n
from services.memory.core.domain.audit import AuditEntry, AuditEvent

_ADD_PER_MEMORY = text(
    """
    INSERT INTO audit_events (audit_id, tenant, action, event_id, trace_id, memory_id, actor, detail)
    SELECT replace(gen_random_uuid()::text, '-', ''), :tenant, :action, :event_id, :trace_id, m.memory_id, :actor,
           CAST(:detail AS jsonb)
    FROM unnest(CAST(:memory_ids AS text[])) WITH ORDINALITY AS m(memory_id, position)
    ORDER BY m.position
    """
)
_AUDIT_TYPES = {
    "audit_id": "text",
    "tenant": "text",
    "action": "text",
    "event_id": "text",
    "trace_id": "text",
    "memory_id": "text",
    "actor": "text",
    "detail": "jsonb",
}


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
        # after what was queued before, so `seq` keeps the order of the calls
        rows = [self._row(entry) for entry in entries]
        self._db.run(self.statements() + unnest_insert("audit_events", _AUDIT_TYPES, rows))

    def flush(self) -> None:
        self._db.run(self.statements())

    def statements(self) -> list[Statement]:
        """The queued entries (see `Db.deferring`) as one INSERT, in the order they were added."""
        return unnest_insert("audit_events", _AUDIT_TYPES, self._db.take("audit_events"))

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
