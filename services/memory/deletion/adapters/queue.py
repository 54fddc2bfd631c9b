"""Cross-tenant bookkeeping of the deletion workflow: the replica registry, leases, replica steps.

Runs in row-level security's maintenance scope "*" (like the change feed), one short transaction
per call. Why a lease and not a lock held for the whole run: a run calls serving and NATS and may
take minutes; a lease survives that without holding a connection, and it simply expires when its
holder dies, so another replica (or the same one restarted) takes the deletion over.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import ALL_TENANTS, set_tenant

_REGISTER = text(
    """
    INSERT INTO memory_replicas (replica_id) VALUES (:replica)
    ON CONFLICT (replica_id) DO UPDATE SET started_at = now(), heartbeat_at = now(), stopped_at = NULL
    """
)
_HEARTBEAT = text(
    """
    INSERT INTO memory_replicas (replica_id) VALUES (:replica)
    ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL
    """
)
_CLAIM = text(
    """
    UPDATE deletions SET lease_owner = :replica, lease_until = now() + make_interval(secs => :lease)
    WHERE deletion_id = (
        SELECT d.deletion_id FROM deletions d
        WHERE d.completed_at IS NULL
          AND (d.lease_until IS NULL OR d.lease_until < now() OR d.lease_owner = :replica)
          AND NOT (d.deletion_id = ANY(:skip))
          AND EXISTS (SELECT 1 FROM deletion_steps s WHERE s.deletion_id = d.deletion_id
                      AND s.state <> 'done' AND s.location NOT LIKE 'replica:%')
        ORDER BY d.created_at
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING deletion_id, tenant
    """
)
_FLAG_SILENT = text(
    """
    UPDATE deletion_steps s
    SET state = 'failed', attempts = s.attempts + 1, updated_at = now(),
        error = 'replica ' || r.replica_id || ' has not reported since '
                || to_char(r.heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                || '; it applies this deletion to its index when it starts again, before it serves'
    FROM memory_replicas r
    WHERE s.location = 'replica:' || r.replica_id AND s.state = 'pending'
      AND (r.stopped_at IS NOT NULL OR r.heartbeat_at < now() - make_interval(secs => :liveness))
    """
)
_COMPLETE_READY = text(
    """
    UPDATE deletions d SET completed_at = now(), lease_until = NULL
    WHERE d.completed_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM deletion_steps s WHERE s.deletion_id = d.deletion_id AND s.state <> 'done')
    RETURNING d.deletion_id, d.tenant, d.requested_by, d.scope, d.trace_id
    """
)
_AUDIT_COMPLETED = text(
    """
    INSERT INTO audit_events (audit_id, tenant, action, event_id, trace_id, actor, detail)
    VALUES (replace(gen_random_uuid()::text, '-', ''), :tenant, 'deletion.completed', :deletion_id,
            :trace_id, :actor, CAST(:detail AS jsonb))
    """
)


class SqlDeletionQueue:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def register(self, replica_id: str) -> None:
        with self._maintenance() as session:
            session.execute(_REGISTER, {"replica": replica_id})

    def heartbeat(self, replica_id: str) -> None:
        with self._maintenance() as session:
            session.execute(_HEARTBEAT, {"replica": replica_id})

    def stopped(self, replica_id: str) -> None:
        with self._maintenance() as session:
            session.execute(
                text("UPDATE memory_replicas SET stopped_at = now() WHERE replica_id = :replica"),
                {"replica": replica_id},
            )

    def claim(self, replica_id: str, lease_seconds: float, skip: Sequence[str]) -> tuple[str, str] | None:
        with self._maintenance() as session:
            row = session.execute(_CLAIM, {"replica": replica_id, "lease": lease_seconds, "skip": list(skip)}).first()
        return None if row is None else (str(row.deletion_id), str(row.tenant))

    def release(self, deletion_id: str) -> None:
        with self._maintenance() as session:
            session.execute(
                text("UPDATE deletions SET lease_until = NULL WHERE deletion_id = :id"), {"id": deletion_id}
            )

    def own_steps(self, location: str) -> list[tuple[str, str]]:
        with self._maintenance() as session:
            rows = session.execute(
                text(
                    "SELECT deletion_id, tenant FROM deletion_steps WHERE location = :location AND state <> 'done'"
                    " ORDER BY updated_at"
                ),
                {"location": location},
            ).all()
        return [(str(r.deletion_id), str(r.tenant)) for r in rows]

    def target_rows(self, deletion_ids: Sequence[str]) -> dict[str, list[int]]:
        with self._maintenance() as session:
            rows = session.execute(
                text("SELECT tenant, row_id FROM deletion_items WHERE deletion_id = ANY(:ids) AND kind = 'memory'"),
                {"ids": list(deletion_ids)},
            ).all()
        found: dict[str, list[int]] = {}
        for row in rows:
            found.setdefault(str(row.tenant), []).append(int(row.row_id))
        return found

    def mark_replica_done(self, deletion_ids: Sequence[str], location: str) -> None:
        with self._maintenance() as session:
            session.execute(
                text(
                    "UPDATE deletion_steps SET state = 'done', error = '', attempts = attempts + 1,"
                    " updated_at = now(), completed_at = now()"
                    " WHERE deletion_id = ANY(:ids) AND location = :location AND state <> 'done'"
                ),
                {"ids": list(deletion_ids), "location": location},
            )

    def flag_silent_replicas(self, liveness_seconds: float) -> int:
        with self._maintenance() as session:
            result = session.execute(_FLAG_SILENT, {"liveness": liveness_seconds})
        return int(result.rowcount)

    def complete_ready(self) -> list[str]:
        """Completion and its audit row commit together, so a completed deletion always has one."""
        with self._maintenance() as session:
            done = session.execute(_COMPLETE_READY).all()
            for row in done:
                detail = json.dumps({"deletion_id": row.deletion_id, "scope": row.scope})
                session.execute(
                    _AUDIT_COMPLETED,
                    {
                        "tenant": row.tenant,
                        "deletion_id": row.deletion_id,
                        "trace_id": row.trace_id,
                        "actor": row.requested_by,
                        "detail": detail,
                    },
                )
        return [str(row.deletion_id) for row in done]

    @contextmanager
    def _maintenance(self) -> Iterator[Any]:
        with self._sessions() as session, session.begin():
            set_tenant(session, ALL_TENANTS)
            yield session
