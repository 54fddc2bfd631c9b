"""Audit rows: insert and read only (the app role holds no UPDATE or DELETE on the table)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select

from services.memory.core.adapters.repositories.base import Db
from services.memory.core.adapters.tables import audit_events as a
from services.memory.core.domain.audit import AuditEntry, AuditEvent


class SqlAuditRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def add(self, entry: AuditEntry) -> None:
        self._db.execute(
            insert(a).values(
                audit_id=uuid.uuid4().hex,
                tenant=self._db.tenant,
                action=entry.action.value,
                event_id=entry.event_id,
                trace_id=entry.trace_id,
                memory_id=entry.memory_id,
                actor=entry.actor,
                detail=entry.detail,
            )
        )

    def add_many(self, entries: Sequence[AuditEntry]) -> None:
        """One multi-row insert (a deletion of a large user writes one row per memory)."""
        if not entries:
            return
        self._db.execute(insert(a), [self._row(entry) for entry in entries])

    def _row(self, entry: AuditEntry) -> dict[str, Any]:
        return {
            "audit_id": uuid.uuid4().hex,
            "tenant": self._db.tenant,
            "action": entry.action.value,
            "event_id": entry.event_id,
            "trace_id": entry.trace_id,
            "memory_id": entry.memory_id,
            "actor": entry.actor,
            "detail": entry.detail,
        }

    def page(self, *, event_id: str, memory_id: str, after_seq: int, limit: int) -> list[AuditEvent]:
        query = select(a).where(a.c.tenant == self._db.tenant, a.c.seq > after_seq)
        if event_id:
            query = query.where(a.c.event_id == event_id)
        if memory_id:
            query = query.where(a.c.memory_id == memory_id)
        return [_event(row) for row in self._db.execute(query.order_by(a.c.seq).limit(limit)).all()]


def _event(row: Any) -> AuditEvent:
    return AuditEvent(
        audit_id=row.audit_id,
        seq=int(row.seq),
        tenant=row.tenant,
        action=row.action,
        event_id=row.event_id,
        trace_id=row.trace_id,
        memory_id=row.memory_id,
        actor=row.actor,
        detail=dict(row.detail),
        created_at=row.created_at,
    )
