"""The memory rows' change feed, read by every replica to keep its vector indexes current.

Why a sequence alone is not enough: `change_seq` values are taken when a row is written, not when
its transaction commits, so a reader can see seq 11 committed while seq 10 is still in flight;
advancing a watermark to 11 would skip 10 forever. Each row therefore also records its writer's
transaction id (`change_xid`), and each read records the oldest transaction still running
(`pg_snapshot_xmin`). Every row the read could not see belongs to a transaction at or after that
horizon, so the next read asks for `change_seq > seq OR change_xid >= xmin`: nothing is skipped,
and re-reading a row is harmless because applying a row's current state is idempotent.

Reads run in one REPEATABLE READ transaction (one snapshot for the horizon and the rows) with the
tenant scope "*", the explicit cross-tenant maintenance scope of row-level security.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import namedtuple_row
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import ALL_TENANTS, set_tenant
from services.common.vocabulary import MemoryType
from services.memory.core.service.ports import FeedCursor, IndexedChange, Vector

# A row that left the active set only needs its id (the index drops it): its vector is not read,
# so a forget of ten thousand memories does not ship their vectors to every replica.
_HORIZON = text("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin")
_COLUMNS = """
    m.row_id, m.memory_id, m.tenant, m.user_id, m.type, m.status, m.change_seq, v.vector,
    CASE WHEN v.vector IS NULL AND m.status = 'active' THEN m.text ELSE '' END AS text
FROM memories m
LEFT JOIN memory_vectors v ON v.memory_id = m.memory_id AND v.embedder = :embedder AND m.status = 'active'
"""
_ACTIVE_ROWS = text(f"SELECT {_COLUMNS} WHERE m.status = 'active'")
_MAX_SEQ = text("SELECT coalesce(max(change_seq), 0) FROM memories")
_STORE_VECTORS = text(
    """
    INSERT INTO memory_vectors (memory_id, embedder, tenant, dim, vector)
    SELECT v.memory_id, :embedder, v.tenant, v.dim, v.vector
    FROM unnest(CAST(:memory_ids AS text[]), CAST(:tenants AS text[]), CAST(:dims AS integer[]),
                CAST(:vectors AS bytea[])) AS v(memory_id, tenant, dim, vector)
    ON CONFLICT (memory_id, embedder) DO NOTHING
    """
)
_SET_ALL_TENANTS = "SELECT set_config('memloop.tenant', %s, true)"
_HORIZON_SQL = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin"
_CHANGED_ROWS_SQL = (
    "SELECT"
    + _COLUMNS.replace(":embedder", "%(embedder)s")
    + " WHERE m.change_seq > %(seq)s OR m.change_xid >= CAST(CAST(%(xmin)s AS text) AS xid8)"
)


class SqlChangeFeed:
    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._sessions = session_factory

    def database_id(self) -> str:
        with self._sessions() as session:
            return str(session.execute(text("SELECT database_id FROM memory_store_identity")).scalar_one())

    def snapshot(self, embedder: str) -> tuple[list[IndexedChange], FeedCursor]:
        """Every active row (for a rebuild) and the cursor that continues exactly after it."""
        with self._repeatable_read() as session:
            xmin = int(session.execute(_HORIZON).scalar_one())
            seq = int(session.execute(_MAX_SEQ).scalar_one())
            rows = session.execute(_ACTIVE_ROWS, {"embedder": embedder}).all()
        return [_change(row) for row in rows], FeedCursor(seq=seq, xmin=xmin)

    def changes_since(self, cursor: FeedCursor, embedder: str) -> tuple[list[IndexedChange], FeedCursor]:
        """The same snapshot as `_ReadSnapshot`, in one round trip after the checkout: the read-only
        setting, the scope, the horizon, the rows and the rollback as one psycopg pipeline. Every
        learning batch's commit runs this (the index catch-up), and it was seven round trips."""
        with self._sessions() as session:
            connection = session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            raw = connection.connection.dbapi_connection
            if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
                raise TypeError("memory needs the psycopg 3 driver")
            params = {"embedder": embedder, "seq": cursor.seq, "xmin": cursor.xmin}
            with raw.cursor() as scope, raw.cursor() as horizon, raw.cursor(row_factory=namedtuple_row) as changed:
                with raw.pipeline():
                    scope.execute("SET TRANSACTION READ ONLY")
                    scope.execute(_SET_ALL_TENANTS, (ALL_TENANTS,))
                    horizon.execute(_HORIZON_SQL)
                    changed.execute(_CHANGED_ROWS_SQL, params)
                    raw.rollback()
                found = horizon.fetchone()
                rows = changed.fetchall()
            xmin = int(found[0]) if found is not None else cursor.xmin
        seq = max([cursor.seq, *(int(row.change_seq) for row in rows)])
        return [_change(row) for row in rows], FeedCursor(seq=seq, xmin=xmin)

    def store_vectors(self, embedder: str, rows: Sequence[tuple[IndexedChange, Vector]]) -> None:
        """Persist vectors computed for rows that had none for this embedder (idempotent).

        One INSERT over arrays (`unnest`), so any number of rows binds five parameters: a
        multi-row VALUES binds five per row and fails past PostgreSQL's 65,535 (about 13,000
        rows), which once stopped memory starting on a database whose vectors were missing.
        """
        if not rows:
            return
        with self._sessions() as session, session.begin():
            set_tenant(session, ALL_TENANTS)
            session.execute(
                _STORE_VECTORS,
                {
                    "memory_ids": [change.memory_id for change, _ in rows],
                    "embedder": embedder,
                    "tenants": [change.tenant for change, _ in rows],
                    "dims": [int(vector.shape[0]) for _, vector in rows],
                    "vectors": [vector.astype("<f4").tobytes() for _, vector in rows],
                },
            )

    def _repeatable_read(self) -> Any:
        return _ReadSnapshot(self._sessions)


class _ReadSnapshot:
    """A read-only REPEATABLE READ transaction in the all-tenants scope, always rolled back."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions
        self._session: Session | None = None

    def __enter__(self) -> Session:
        session = self._sessions()
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        session.execute(text("SET TRANSACTION READ ONLY"))
        set_tenant(session, ALL_TENANTS)
        self._session = session
        return session

    def __exit__(self, *exc: object) -> None:
        if self._session is not None:
            self._session.rollback()
            self._session.close()


def _change(row: Any) -> IndexedChange:
    vector = None if row.vector is None else np.frombuffer(bytes(row.vector), dtype="<f4").astype(np.float32)
    return IndexedChange(
        row_id=int(row.row_id),
        memory_id=row.memory_id,
        tenant=row.tenant,
        user=row.user_id,
        type=MemoryType(row.type),
        active=row.status == "active",
        vector=vector,
        text=row.text,
    )
