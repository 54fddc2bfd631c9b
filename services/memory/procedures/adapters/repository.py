"""Learned-procedure rows (ADR-0102) over SQLAlchemy Core, inside the memory unit of work.

The table's description lives here rather than in `tables.py` because it carries PostgreSQL
enum and uuid types the other memory tables do not; like those, it only names columns (the
migration m0002 owns the DDL, RLS and grants). Every query also filters on the tenant, on top
of row-level security: two independent guards, as in the memories repository.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import BigInteger, Column, DateTime, Integer, MetaData, Select, Table, Text, Uuid, func, select, update
from sqlalchemy.dialects.postgresql import ENUM, JSONB

from services.memory.core.adapters.repositories.base import Db
from services.memory.procedures.domain.procedures import (
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
)
from services.memory.procedures.service.ports import ProcedureFilter


def _enum(name: str, values: type[ProcedureKind] | type[ProcedureStatus] | type[ProcedureSource]) -> ENUM:
    return ENUM(*(v.value for v in values), name=name, create_type=False)


metadata = MetaData()

learned_procedures = Table(
    "learned_procedures",
    metadata,
    Column("id", Uuid(as_uuid=False), primary_key=True),
    Column("row_id", BigInteger),
    Column("tenant", Text),
    Column("intent_key", Text),
    Column("title", Text),
    Column("kind", _enum("learned_procedure_kind", ProcedureKind)),
    Column("scope", Text),
    Column("trigger", Text),
    Column("action", Text),
    Column("rationale", Text),
    Column("details", JSONB),
    Column("status", _enum("learned_procedure_status", ProcedureStatus)),
    Column("version", Integer),
    Column("supersedes_id", Uuid(as_uuid=False)),
    Column("superseded_by_id", Uuid(as_uuid=False)),
    Column("source", _enum("learned_procedure_source", ProcedureSource)),
    Column("created_by", Text),
    Column("created_at", DateTime(timezone=True)),
    Column("updated_at", DateTime(timezone=True)),
)
lp = learned_procedures


class SqlProcedureRepository:
    """Implements `ProcedureRepository`; a lost one-active race surfaces from `Db.execute` as
    SupersessionConflict (the index names are listed in `repositories/base.py`)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._tenant = db.tenant

    def get(self, procedure_id: str, *, lock: bool = False) -> LearnedProcedure | None:
        query = self._select().where(lp.c.id == procedure_id)
        row = self._db.execute(query.with_for_update() if lock else query).first()
        return None if row is None else _procedure(row)

    def active_for_intent(self, intent_key: str, *, lock: bool) -> LearnedProcedure | None:
        query = self._select().where(lp.c.intent_key == intent_key, lp.c.status == ProcedureStatus.ACTIVE.value)
        row = self._db.execute(query.with_for_update() if lock else query).first()
        return None if row is None else _procedure(row)

    def max_version(self, intent_key: str) -> int:
        query = select(func.coalesce(func.max(lp.c.version), 0)).where(
            lp.c.tenant == self._tenant, lp.c.intent_key == intent_key
        )
        return int(self._db.execute(query).scalar_one())

    def of_intents(self, intent_keys: Collection[str]) -> list[LearnedProcedure]:
        if not intent_keys:
            return []
        query = self._select().where(lp.c.intent_key.in_(sorted(intent_keys)))
        rows = self._db.execute(query.order_by(lp.c.intent_key, lp.c.version, lp.c.row_id)).all()
        return [_procedure(row) for row in rows]

    def add(self, procedure: LearnedProcedure) -> None:
        self._db.execute(
            lp.insert().values(
                id=procedure.id,
                tenant=self._tenant,
                intent_key=procedure.intent_key,
                title=procedure.title,
                kind=procedure.kind.value,
                scope=procedure.scope,
                trigger=procedure.trigger,
                action=procedure.action,
                rationale=procedure.rationale,
                details=procedure.details,
                status=procedure.status.value,
                version=procedure.version,
                supersedes_id=procedure.supersedes_id,
                superseded_by_id=procedure.superseded_by_id,
                source=procedure.source.value,
                created_by=procedure.created_by,
                created_at=procedure.created_at,
                updated_at=procedure.updated_at,
            )
        )

    def update_lifecycle(self, procedure: LearnedProcedure) -> None:
        self._db.execute(
            update(lp)
            .where(lp.c.tenant == self._tenant, lp.c.id == procedure.id)
            .values(
                status=procedure.status.value,
                version=procedure.version,
                supersedes_id=procedure.supersedes_id,
                superseded_by_id=procedure.superseded_by_id,
                updated_at=procedure.updated_at,
            )
        )

    def page(self, where: ProcedureFilter, *, after_row_id: int, limit: int) -> list[tuple[int, LearnedProcedure]]:
        query = self._select().where(lp.c.row_id > after_row_id)
        if where.kind is not None:
            query = query.where(lp.c.kind == where.kind.value)
        if where.status is not None:
            query = query.where(lp.c.status == where.status.value)
        rows = self._db.execute(query.order_by(lp.c.row_id).limit(limit)).all()
        return [(int(row.row_id), _procedure(row)) for row in rows]

    def _select(self) -> Select[Any]:
        return select(lp).where(lp.c.tenant == self._tenant)


def _procedure(row: Any) -> LearnedProcedure:
    return LearnedProcedure(
        id=str(row.id),
        tenant=row.tenant,
        intent_key=row.intent_key,
        title=row.title,
        kind=ProcedureKind(row.kind),
        scope=row.scope,
        trigger=row.trigger,
        action=row.action,
        rationale=row.rationale,
        details=dict(row.details),
        status=ProcedureStatus(row.status),
        version=int(row.version),
        supersedes_id=None if row.supersedes_id is None else str(row.supersedes_id),
        superseded_by_id=None if row.superseded_by_id is None else str(row.superseded_by_id),
        source=ProcedureSource(row.source),
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
