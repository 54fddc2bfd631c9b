"""Serving's unit of work on PostgreSQL: one transaction, one tenant, the repositories of
`services.serving.adapters.postgres` (results, contents, outbox) and the pipelined new-request insert.

Row-level security is set per transaction: lazily, so that `add_new_request` can send the tenant
setting in the same round trip as its inserts, and always before any statement of the unit of
work runs (every repository is reached through a property that scopes first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Self

import psycopg
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import SqlAlchemyUnitOfWork, set_tenant
from services.serving.adapters import bulk_forget
from services.serving.adapters.postgres.contents import SqlContentRepository
from services.serving.adapters.postgres.new_request import add_new_request
from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL, SqlOutboxRepository
from services.serving.adapters.postgres.results import SqlResultRepository
from services.serving.domain.model import NewResult

__all__ = [
    "NOTIFY_CHANNEL",
    "SqlContentRepository",
    "SqlOutboxRepository",
    "SqlResultRepository",
    "SqlServingUnitOfWork",
]


class SqlServingUnitOfWork(SqlAlchemyUnitOfWork):
    """One transaction, one tenant, three repositories.

    The tenant is set lazily: `add_new_request` sends it in the same pipeline as the inserts (one
    round trip on the serving path), and any repository reached through a property sets it first,
    so no statement of this unit of work can run unscoped.
    """

    def __init__(self, session_factory: sessionmaker[Session], tenant: str) -> None:
        super().__init__(session_factory, tenant)
        self._tenant_name = tenant
        self._scoped = False

    def __enter__(self) -> Self:
        super().__enter__()
        return self

    def _scope(self, session: Session) -> None:
        self._scoped = False

    def _ensure_scoped(self) -> None:
        if not self._scoped:
            set_tenant(self.session, self._tenant_name)
            self._scoped = True

    def _open(self, session: Session) -> None:
        self._results = SqlResultRepository(session, self._tenant_name)
        self._contents = SqlContentRepository(session, self._tenant_name)
        self._outbox = SqlOutboxRepository(session, self._tenant_name)

    @property
    def results(self) -> SqlResultRepository:
        self._ensure_scoped()
        return self._results

    @property
    def contents(self) -> SqlContentRepository:
        self._ensure_scoped()
        return self._contents

    @property
    def outbox(self) -> SqlOutboxRepository:
        self._ensure_scoped()
        return self._outbox

    def delete_contents(self, content_refs: list[str], event_ids: list[str], deletion_id: str, now: datetime) -> int:
        self._ensure_scoped()
        return bulk_forget.delete_contents(self.session, self._tenant_name, content_refs, event_ids, deletion_id, now)

    def add_new_request(self, new: NewResult, *, with_event: bool, commit: bool = False) -> bool:
        """The tenant setting and every row of a new request in one pipelined round trip
        (`postgres.new_request`), with the COMMIT too if `commit`; a replay writes nothing and the
        caller reads the first call's result instead. True if inserted."""
        conn = self.session.connection().connection.dbapi_connection
        if not isinstance(conn, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
            raise TypeError("serving needs the psycopg 3 driver")
        inserted = add_new_request(
            conn, new, with_event=with_event, tenant_setting="" if self._scoped else self._tenant_name, commit=commit
        )
        # After a COMMIT the tenant setting (transaction-local) is gone: a later read (a replay's)
        # runs in a new transaction that must be scoped again. SQLAlchemy's own commit is then a
        # no-op on the idle connection.
        self._scoped = not commit
        if commit:
            self.commit()
        return inserted
