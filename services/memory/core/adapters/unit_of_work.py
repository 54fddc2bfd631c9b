"""The memory database's unit of work: one tenant-scoped transaction and its repositories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import SqlAlchemyUnitOfWork
from services.memory.core.adapters.repositories.audit import SqlAuditRepository
from services.memory.core.adapters.repositories.base import Db, Statement, as_conflict
from services.memory.core.adapters.repositories.memories import SqlMemoryRepository
from services.memory.core.adapters.repositories.records import (
    SqlCandidateRepository,
    SqlProcessedEventRepository,
    SqlRequestRepository,
    SqlReviewRepository,
)
from services.memory.procedures.adapters.repository import SqlProcedureRepository

_SET_TENANT = "SELECT set_config('memloop.tenant', %s, true)"
_LOCK_MANY_SQL = (
    "SELECT count(pg_advisory_xact_lock(hashtextextended(k.key, 0)))"
    " FROM unnest(%(keys)s::text[]) WITH ORDINALITY AS k(key, position)"
)
_LOCK_MANY = text(
    "SELECT count(pg_advisory_xact_lock(hashtextextended(k.key, 0)))"
    " FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, position)"
)


class SqlMemoryUnitOfWork(SqlAlchemyUnitOfWork):
    """Rolls back unless committed; lost races surface as SupersessionConflict, also from commit."""

    memories: SqlMemoryRepository
    candidates: SqlCandidateRepository
    reviews: SqlReviewRepository
    audit: SqlAuditRepository
    events: SqlProcessedEventRepository
    requests: SqlRequestRepository
    procedures: SqlProcedureRepository

    def __init__(self, session_factory: sessionmaker[Session], tenant: str) -> None:
        super().__init__(session_factory, tenant)
        self._tenant_name = tenant

    def __enter__(self) -> SqlMemoryUnitOfWork:
        super().__enter__()
        return self

    def _scope(self, session: Session) -> None:
        """BEGIN and the tenant setting in one round trip (a psycopg pipeline) instead of two; no
        statement can run before it, because the repositories exist only after `_open`."""
        raw = session.connection().connection.dbapi_connection
        if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
            super()._scope(session)
            return
        with raw.pipeline():
            raw.execute(_SET_TENANT, (self._tenant_name,))

    def _open(self, session: Session) -> None:
        self._db = Db(session, self._tenant_name)
        self.memories = SqlMemoryRepository(self._db)
        self.candidates = SqlCandidateRepository(self._db)
        self.reviews = SqlReviewRepository(self._db)
        self.audit = SqlAuditRepository(self._db)
        self.events = SqlProcessedEventRepository(self._db)
        self.requests = SqlRequestRepository(self._db)
        self.procedures = SqlProcedureRepository(self._db)

    def lock(self, key: str) -> None:
        self.lock_many([key])

    def lock_many(self, keys: Sequence[str]) -> None:
        """One statement; the locks are taken in the order given (unnest's order, one row at a time)."""
        if not keys:
            return
        self._db.execute(_LOCK_MANY, {"keys": [f"{self._tenant_name}\x1f{key}" for key in keys]})

    def begin_batch(
        self,
        lock_keys: Sequence[str],
        event_ids: Sequence[str],
        events: Sequence[tuple[str, datetime | None]],
        store_keys: Sequence[tuple[str, str, str]],
    ) -> tuple[dict[str, tuple[dict[str, Any], datetime]], list[str | None]]:
        """The locks, the ledger, the users' deletions and the STOREs' active records (locked) as
        ONE pipeline: one round trip where four statements were four. The server runs them in
        order, so the reads start once every lock is held."""
        lock = (_LOCK_MANY_SQL, {"keys": [f"{self._tenant_name}\x1f{key}" for key in lock_keys]})
        statements = [lock, self.events.processed_statement(event_ids), self.events.forgotten_statement(events)]
        prefetch = self.memories.prefetch_statement(store_keys)
        if prefetch is not None:
            statements.append(prefetch)
        results = self._db.fetch(statements)
        if prefetch is not None:
            self.memories.remember_prefetched(store_keys, results[3])
        return self.events.processed_from(results[1]), self.events.forgotten_from(events, results[2])

    def defer_appends(self) -> None:
        self._db.deferring = True

    def _queued_statements(self) -> list[Statement]:
        """Every repository's queued writes, in the order the commit sends them."""
        return (
            self.candidates.statements()
            + self.reviews.statements()
            + self.memories.statements()
            + self.events.statements()
            + self.audit.statements()
        )

    def commit(self) -> None:
        try:
            # Queued appends first, parents before children: candidates before the review items
            # that reference them; the audit trail last, as it was written last before. All of
            # them and the COMMIT go as one pipeline: one round trip (the session's own commit
            # then finds the transaction closed and sends nothing).
            self._db.run(self._queued_statements(), commit=True)
            super().commit()
        except DBAPIError as exc:
            conflict = as_conflict(exc)
            if conflict is not None:
                raise conflict from exc
            raise
