"""Consolidation's SQL: the snapshot read, the write-back's locks and copies, job records, the
per-user lock on a dedicated connection, and the scheduler's cross-tenant reads.

Builds on the memory unit of work (`SqlMemoryUnitOfWork`): the write-back's supersessions, inserts
and audit rows go through its repositories, on the same transaction as everything here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    Table,
    Text,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB, aggregate_order_by
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import ALL_TENANTS, set_tenant
from services.memory.consolidation.service.ports import (
    ConsolidationJob,
    DueUser,
    JobState,
    JobTrigger,
    LiveState,
)
from services.memory.core.adapters.repositories.base import Db, Statement
from services.memory.core.adapters.repositories.memories import record_from_row
from services.memory.core.adapters.tables import memories as m
from services.memory.core.adapters.tables import memory_sources as ms
from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.domain.model import MemoryRecord, MemoryStatus

# The job table's columns after m0001_core + m0003_consolidation (named here, created by migrations).
jobs = Table(
    "consolidation_jobs",
    MetaData(),
    Column("job_id", Text, primary_key=True),
    Column("seq", BigInteger),
    Column("tenant", Text),
    Column("user_id", Text),
    Column("state", Text),
    Column("trigger", Text),
    Column("requested_by", Text),
    Column("trace_id", Text),
    Column("snapshot_ids", JSONB),
    Column("snapshot_size", Integer),
    Column("kept", Integer),
    Column("retired", Integer),
    Column("untouched", Integer),
    Column("deferred", Integer),
    Column("sent_to_review", Integer),
    Column("error", Text),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
)

_ACTIVE = MemoryStatus.ACTIVE.value
_log = logging.getLogger(__name__)
_COPY_PROVENANCE = """
    INSERT INTO memory_sources (memory_id, event_id, tenant, trace_id, added_at)
    SELECT DISTINCT ON (p.new_id, s.event_id) p.new_id, s.event_id, s.tenant, s.trace_id, s.added_at
    FROM unnest(%(new)s::text[], %(from)s::text[]) AS p(new_id, from_id)
    JOIN memory_sources s ON s.tenant = %(tenant)s AND s.memory_id = p.from_id
    ORDER BY p.new_id, s.event_id, s.added_at
    ON CONFLICT (memory_id, event_id) DO NOTHING
"""
_COPY_VECTORS = """
    INSERT INTO memory_vectors (memory_id, embedder, tenant, dim, vector)
    SELECT p.new_id, v.embedder, v.tenant, v.dim, v.vector
    FROM unnest(%(new)s::text[], %(from)s::text[]) AS p(new_id, from_id)
    JOIN memory_vectors v ON v.tenant = %(tenant)s AND v.memory_id = p.from_id
    ON CONFLICT (memory_id, embedder) DO NOTHING
"""


class SqlConsolidationRepository:
    def __init__(self, db: Db) -> None:
        self._db = db
        self._tenant = db.tenant
        self._provenance: list[tuple[str, str]] = []  # (new version, member) pairs, queued
        self._vectors: list[tuple[str, str]] = []  # (new version, member whose wording it took)

    def active_records(self, user: str) -> list[MemoryRecord]:
        sources = func.array_agg(aggregate_order_by(ms.c.event_id, ms.c.added_at, ms.c.event_id))
        query = (
            select(m, sources.filter(ms.c.event_id.is_not(None)).label("sources"))
            .select_from(m.outerjoin(ms, (ms.c.memory_id == m.c.memory_id) & (ms.c.tenant == m.c.tenant)))
            .where(m.c.tenant == self._tenant, m.c.user_id == user, m.c.status == _ACTIVE)
            .group_by(m.c.memory_id)
            .order_by(m.c.row_id)
        )
        return [_memory(row) for row in self._db.execute(query).all()]

    def lock_live_state(self, user: str, memory_ids: Iterable[str]) -> dict[str, LiveState]:
        ids = sorted(set(memory_ids))
        if not ids:
            return {}
        rows = self._db.execute(
            text(
                "SELECT memory_id, status FROM memories WHERE tenant = :tenant AND user_id = :user "
                "AND memory_id = ANY(:ids) ORDER BY memory_id FOR UPDATE"
            ),
            {"tenant": self._tenant, "user": user, "ids": ids},
        ).all()
        found: dict[str, set[str]] = {row.memory_id: set() for row in rows}
        for source in self._db.execute(
            text("SELECT memory_id, event_id FROM memory_sources WHERE tenant = :tenant AND memory_id = ANY(:ids)"),
            {"tenant": self._tenant, "ids": ids},
        ).all():
            found.setdefault(source.memory_id, set()).add(source.event_id)
        return {row.memory_id: LiveState(MemoryStatus(row.status), frozenset(found[row.memory_id])) for row in rows}

    def active_ids(self, user: str) -> frozenset[str]:
        query = select(m.c.memory_id).where(m.c.tenant == self._tenant, m.c.user_id == user, m.c.status == _ACTIVE)
        return frozenset(self._db.execute(query).scalars().all())

    def copy_provenance(self, groups: Mapping[str, Iterable[str]]) -> None:
        """Queue, per new version, the union of its members' sources, each keeping the trace and
        time it first arrived with: one INSERT for every version, sent with the commit after the
        new rows it references (`statements`)."""
        for new_id, from_ids in groups.items():
            for from_id in sorted(set(from_ids)):
                self._provenance.append((new_id, from_id))

    def copy_vectors(self, wordings: Mapping[str, str]) -> None:
        """Queue, per new version, the vectors of the member whose text it took: no re-embedding."""
        self._vectors.extend(wordings.items())

    def statements(self) -> list[Statement]:
        """Takes the queued copies, as at most two statements over arrays of (new, from) pairs."""
        provenance, vectors = self._provenance, self._vectors
        self._provenance, self._vectors = [], []
        out: list[Statement] = []
        for sql, pairs in ((_COPY_PROVENANCE, provenance), (_COPY_VECTORS, vectors)):
            if pairs:
                params = {"tenant": self._tenant, "new": [n for n, _ in pairs], "from": [f for _, f in pairs]}
                out.append((sql, params))
        return out

    def existing_review_keys(self, user: str, candidate_keys: Iterable[str]) -> frozenset[str]:
        keys = sorted(set(candidate_keys))
        if not keys:
            return frozenset()
        rows = self._db.execute(
            text(
                "SELECT DISTINCT c.candidate_key FROM candidates c "
                "JOIN review_items r ON r.candidate_id = c.candidate_id "
                "WHERE c.tenant = :tenant AND c.user_id = :user AND c.candidate_key = ANY(:keys)"
            ),
            {"tenant": self._tenant, "user": user, "keys": keys},
        ).scalars()
        return frozenset(rows)

    def add_job(self, job: ConsolidationJob) -> None:
        self._db.execute(insert(jobs).values(job_id=job.job_id, tenant=self._tenant, **_job_values(job)))

    def save_job(self, job: ConsolidationJob) -> None:
        self._db.execute(update(jobs).where(*self._job(job.job_id)).values(**_job_values(job)))

    def record_snapshot(self, job_id: str, memory_ids: Iterable[str]) -> None:
        ids = list(memory_ids)
        self._db.execute(update(jobs).where(*self._job(job_id)).values(snapshot_ids=ids, snapshot_size=len(ids)))

    def get_job(self, job_id: str) -> ConsolidationJob | None:
        row = self._db.execute(_job_columns().where(*self._job(job_id))).first()
        return None if row is None else _job_record(row)

    def running_job(self, user: str) -> ConsolidationJob | None:
        query = _job_columns().where(jobs.c.tenant == self._tenant, jobs.c.user_id == user, jobs.c.state == "running")
        row = self._db.execute(query).first()
        return None if row is None else _job_record(row)

    def abandon_running(self, user: str, *, error: str, now: datetime) -> list[str]:
        result = self._db.execute(
            update(jobs)
            .where(jobs.c.tenant == self._tenant, jobs.c.user_id == user, jobs.c.state == JobState.RUNNING.value)
            .values(state=JobState.FAILED.value, error=error, finished_at=now)
            .returning(jobs.c.job_id)
        )
        return sorted(result.scalars().all())

    def page_jobs(self, user: str, *, before_seq: int, limit: int) -> list[tuple[int, ConsolidationJob]]:
        query = _job_columns().where(jobs.c.tenant == self._tenant)
        if user:
            query = query.where(jobs.c.user_id == user)
        if before_seq:
            query = query.where(jobs.c.seq < before_seq)
        rows = self._db.execute(query.order_by(jobs.c.seq.desc()).limit(limit)).all()
        return [(int(row.seq), _job_record(row)) for row in rows]

    def _job(self, job_id: str) -> tuple[Any, ...]:
        return (jobs.c.tenant == self._tenant, jobs.c.job_id == job_id)


class SqlConsolidationUnitOfWork(SqlMemoryUnitOfWork):
    """The memory unit of work with consolidation's repository on the same transaction."""

    consolidation: SqlConsolidationRepository

    def __enter__(self) -> SqlConsolidationUnitOfWork:
        super().__enter__()
        return self

    def _open(self, session: Session) -> None:
        super()._open(session)
        self.consolidation = SqlConsolidationRepository(self._db)

    def _queued_statements(self) -> list[Statement]:
        """The job's copies go after the new rows they reference (the memories' queue)."""
        return super()._queued_statements() + self.consolidation.statements()


class SqlJobSession:
    """A job's dedicated connection: the user's session-level advisory lock and the job's transactions.

    The lock key is the one `uow.lock(f"consolidation:{user}")` would take, so the key space is
    shared with the memory unit of work's transaction locks on purpose. A lock dies with its
    connection: a killed process frees the user at once, and a job whose connection broke cannot
    commit its write-back on it either.
    """

    def __init__(self, connection: Connection, tenant: str, user: str) -> None:
        self._connection = connection
        self._tenant = tenant
        self._key = f"{tenant}\x1fconsolidation:{user}"
        self._sessions = sessionmaker(bind=connection)
        self.locked = False

    def lock(self, *, wait_seconds: float) -> bool:
        conn, key = self._connection, {"key": self._key}
        if wait_seconds <= 0:
            self.locked = bool(
                conn.execute(text("SELECT pg_try_advisory_lock(hashtextextended(:key, 0))"), key).scalar()
            )
            conn.commit()
            return self.locked
        timeout = {"timeout": f"{max(1, int(wait_seconds * 1000))}ms"}
        conn.execute(text("SELECT set_config('lock_timeout', :timeout, false)"), timeout)
        conn.commit()
        try:
            conn.execute(text("SELECT pg_advisory_lock(hashtextextended(:key, 0))"), key)
            conn.commit()
            self.locked = True
        except DBAPIError as exc:
            conn.rollback()
            if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available: waited long enough
                raise
        finally:
            conn.execute(text("RESET lock_timeout"))
            conn.commit()
        return self.locked

    def uow(self) -> SqlConsolidationUnitOfWork:
        return SqlConsolidationUnitOfWork(self._sessions, self._tenant)

    def release(self) -> None:
        """Unlock before the connection returns to the pool; a connection that cannot is discarded
        (closing it frees the lock server-side), so this never raises."""
        try:
            if self.locked:
                unlock = text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))")
                self._connection.execute(unlock, {"key": self._key})
                self._connection.commit()
        except Exception:
            _log.warning("could not unlock %r; discarding its connection", self._key, exc_info=True)
            self._connection.invalidate()
        finally:
            self.locked = False
            self._connection.close()


def job_sessions(engine: Engine) -> Callable[[str, str], AbstractContextManager[SqlJobSession]]:
    """The `JobSessionFactory`: one pooled connection per job, unlocked and returned on exit."""

    @contextmanager
    def open_session(tenant: str, user: str) -> Iterator[SqlJobSession]:
        session = SqlJobSession(engine.connect(), tenant, user)
        try:
            yield session
        finally:
            session.release()

    return open_session


class SqlConsolidationActivity:
    """The scheduler's reads across tenants (row-level security's explicit maintenance scope "*")."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def users_with_new_memories(self, after_row_id: int) -> tuple[list[tuple[str, str]], int]:
        rows = self._read(
            "SELECT tenant, user_id, max(row_id) AS last FROM memories WHERE row_id > :after GROUP BY tenant, user_id",
            after=after_row_id,
        )
        return [(r.tenant, r.user_id) for r in rows], max([after_row_id, *(int(r.last) for r in rows)])

    def due_states(self, users: Sequence[tuple[str, str]]) -> list[DueUser]:
        """Per user: memories written since its last completed job started, not counting the jobs'
        own rows. One statement for every watched user: the scheduler asked once per user and
        poll, its own transaction each, and a user stays watched until consolidated (idle time,
        300 s by default), so a busy tenant's new users cost a transaction each every 5 s."""
        if not users:
            return []
        rows = self._read(
            "SELECT k.ord, count(m.one) AS fresh, max(m.created_at) AS last_new "
            "FROM unnest(CAST(:tenants AS text[]), CAST(:users AS text[])) WITH ORDINALITY AS k(tenant, user_id, ord) "
            "LEFT JOIN LATERAL ("
            "  SELECT 1 AS one, m.created_at FROM memories m "
            "  WHERE m.tenant = k.tenant AND m.user_id = k.user_id AND m.created_at > coalesce(("
            "    SELECT max(started_at) FROM consolidation_jobs "
            "    WHERE tenant = k.tenant AND user_id = k.user_id AND state = 'completed'), '-infinity') "
            "  AND NOT EXISTS (SELECT 1 FROM consolidation_jobs j WHERE j.tenant = m.tenant AND j.job_id = m.event_id)"
            ") m ON true GROUP BY k.ord ORDER BY k.ord",
            tenants=[tenant for tenant, _ in users],
            users=[user for _, user in users],
        )
        return [
            DueUser(tenant, user, int(row.fresh), row.last_new) for (tenant, user), row in zip(users, rows, strict=True)
        ]

    def running_jobs(self, *, started_before: datetime) -> list[tuple[str, str]]:
        rows = self._read(
            "SELECT DISTINCT tenant, user_id FROM consolidation_jobs WHERE state = 'running' AND started_at < :before",
            before=started_before,
        )
        return [(r.tenant, r.user_id) for r in rows]

    def _read(self, sql: str, **params: Any) -> list[Any]:
        with self._sessions() as session, session.begin():
            set_tenant(session, ALL_TENANTS)
            return list(session.execute(text(sql), params).all())


def _memory(row: Any) -> MemoryRecord:
    return record_from_row(row, tuple(row.sources or ()))


def _job_values(job: ConsolidationJob) -> dict[str, Any]:
    return {
        "user_id": job.user,
        "state": job.state.value,
        "trigger": job.trigger.value,
        "requested_by": job.requested_by,
        "trace_id": job.trace_id,
        "snapshot_size": job.snapshot_size,
        "kept": job.kept,
        "retired": job.retired,
        "untouched": job.untouched,
        "deferred": job.deferred,
        "sent_to_review": job.sent_to_review,
        "error": job.error,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def _job_columns() -> Any:
    return select(*(c for c in jobs.c if c.name != "snapshot_ids"))


def _job_record(row: Any) -> ConsolidationJob:
    return ConsolidationJob(
        job_id=row.job_id,
        tenant=row.tenant,
        user=row.user_id,
        state=JobState(row.state),
        started_at=row.started_at,
        trigger=JobTrigger(row.trigger),
        requested_by=row.requested_by,
        trace_id=row.trace_id,
        snapshot_size=int(row.snapshot_size),
        kept=int(row.kept),
        retired=int(row.retired),
        untouched=int(row.untouched),
        deferred=int(row.deferred),
        sent_to_review=int(row.sent_to_review),
        error=row.error,
        finished_at=row.finished_at,
    )
