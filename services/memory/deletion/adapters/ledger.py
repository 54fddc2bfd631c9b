"""The deletion ledger inside a tenant's unit of work: deletions, their items (ids only) and steps.

Plain SQL over the tables m0001/m0004 created. Every statement names the tenant explicitly on top
of row-level security (two guards), and every write is idempotent (`ON CONFLICT`, guarded
updates), because a step may run again after a crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import text

from services.memory.core.adapters.repositories.base import Db
from services.memory.deletion.domain.deletion import (
    CONTENT_BLOBS,
    DERIVED_RECORDS,
    MEMORY_ROWS,
    RETRIEVAL,
    STREAMS,
    VECTORS,
    Deletion,
    DeletionStep,
    ForgetScope,
    MemoryRef,
    StepState,
)
from services.memory.deletion.service.ports import EventItem, NewDeletion

_REFS = "SELECT memory_id, row_id, user_id, status, supersedes FROM memories WHERE tenant = :tenant"

_ADD_ITEMS = text(
    """
    INSERT INTO deletion_items (deletion_id, kind, item_id, tenant, user_id, row_id, content_ref)
    SELECT :deletion_id, :kind, i.item_id, :tenant, i.user_id, i.row_id, i.content_ref
    FROM unnest(CAST(:item_ids AS text[]), CAST(:user_ids AS text[]), CAST(:row_ids AS bigint[]),
                CAST(:content_refs AS text[])) AS i(item_id, user_id, row_id, content_ref)
    ON CONFLICT (deletion_id, kind, item_id) DO UPDATE SET
        content_ref = CASE WHEN deletion_items.content_ref = '' THEN excluded.content_ref
                           ELSE deletion_items.content_ref END,
        user_id = CASE WHEN deletion_items.user_id = '' THEN excluded.user_id ELSE deletion_items.user_id END
    """
)
"""Items as one INSERT over arrays, however many (a user's memories and events are thousands).
The caller passes each item once: ON CONFLICT may not touch the same row twice in one statement."""

_CANDIDATES_OF = {
    ForgetScope.EVENT: "c.event_id = :event_id",
    ForgetScope.USER: "c.user_id = :user",
    ForgetScope.MEMORY: """(
        c.memory_id IN (SELECT item_id FROM deletion_items WHERE deletion_id = :deletion_id AND kind = 'memory')
        OR (c.user_id = :user AND c.candidate_key <> '' AND c.candidate_key IN (
            SELECT m.candidate_key FROM memories m
            JOIN deletion_items i ON i.item_id = m.memory_id AND i.deletion_id = :deletion_id AND i.kind = 'memory'
            WHERE m.tenant = :tenant AND m.candidate_key <> '')))""",
}

_USER_EVENTS = text(
    """
    INSERT INTO deletion_items (deletion_id, kind, item_id, tenant, user_id)
    SELECT :deletion_id, 'event', e.event_id, :tenant, :user FROM (
        SELECT event_id FROM processed_events WHERE tenant = :tenant AND user_id = :user
        UNION SELECT event_id FROM candidates WHERE tenant = :tenant AND user_id = :user
        UNION SELECT s.event_id FROM memory_sources s JOIN memories m ON m.memory_id = s.memory_id
              WHERE m.tenant = :tenant AND m.user_id = :user AND s.tenant = :tenant
    ) e
    ON CONFLICT DO NOTHING
    """
)


class SqlDeletionLedger:
    def __init__(self, db: Db) -> None:
        self._db = db
        self._tenant = db.tenant

    def live_replicas(self, liveness_seconds: float) -> list[str]:
        rows = self._run(
            "SELECT replica_id FROM memory_replicas WHERE stopped_at IS NULL"
            " AND heartbeat_at > now() - make_interval(secs => :liveness)",
            liveness=liveness_seconds,
        )
        return [str(r.replica_id) for r in rows]

    def memory_refs(self, memory_ids: Sequence[str]) -> list[MemoryRef]:
        if not memory_ids:
            return []
        return [_ref(r) for r in self._run(f"{_REFS} AND memory_id = ANY(:ids)", ids=list(memory_ids))]

    def memory_refs_of_user(self, user: str) -> list[MemoryRef]:
        return [_ref(r) for r in self._run(f"{_REFS} AND user_id = :user ORDER BY row_id", user=user)]

    def sources_of_event(self, event_id: str) -> dict[str, frozenset[str]]:
        rows = self._run(
            """
            SELECT s.memory_id, array_agg(o.event_id) AS sources
            FROM memory_sources s JOIN memory_sources o ON o.memory_id = s.memory_id AND o.tenant = :tenant
            WHERE s.tenant = :tenant AND s.event_id = :event_id
            GROUP BY s.memory_id
            """,
            event_id=event_id,
        )
        return {str(r.memory_id): frozenset(r.sources) for r in rows}

    def user_of_event(self, event_id: str) -> str:
        row = self._run(
            """
            SELECT coalesce(
                (SELECT user_id FROM processed_events WHERE tenant = :tenant AND event_id = :event_id),
                (SELECT user_id FROM candidates WHERE tenant = :tenant AND event_id = :event_id LIMIT 1),
                (SELECT m.user_id FROM memory_sources s JOIN memories m ON m.memory_id = s.memory_id
                 WHERE s.tenant = :tenant AND s.event_id = :event_id LIMIT 1),
                '') AS user_id
            """,
            event_id=event_id,
        )
        return str(row[0].user_id)

    def add(self, deletion: NewDeletion, locations: Sequence[str], done: Sequence[str]) -> None:
        self._run(
            """
            INSERT INTO deletions (deletion_id, tenant, scope, memory_id, user_id, event_id, source_request_id,
                                   request_id, requested_by, created_at, reason, trace_id, memories_affected,
                                   lease_owner, lease_until)
            VALUES (:deletion_id, :tenant, :scope, :memory_id, :user_id, :event_id, :source_request_id,
                    :request_id, :requested_by, :created_at, :reason, :trace_id, :memories_affected,
                    :lease_owner, :lease_until)
            """,
            fetch=False,
            deletion_id=deletion.deletion_id,
            scope=deletion.scope.value,
            memory_id=deletion.memory_id,
            user_id=deletion.user,
            event_id=deletion.event_id,
            source_request_id=deletion.source_request_id,
            request_id=deletion.request_id,
            requested_by=deletion.requested_by,
            created_at=deletion.created_at,
            reason=deletion.reason,
            trace_id=deletion.trace_id,
            memories_affected=deletion.memories_affected,
            lease_owner=deletion.lease_owner,
            lease_until=deletion.lease_until,
        )
        steps = [
            {
                "deletion_id": deletion.deletion_id,
                "location": location,
                "tenant": self._tenant,
                "state": (StepState.DONE if location in done else StepState.PENDING).value,
                "completed_at": deletion.created_at if location in done else None,
            }
            for location in locations
        ]
        self._db.execute(
            text(
                "INSERT INTO deletion_steps (deletion_id, location, tenant, state, completed_at) "
                "VALUES (:deletion_id, :location, :tenant, :state, :completed_at)"
            ),
            steps,
        )

    def add_memory_items(self, deletion_id: str, memories: Sequence[MemoryRef]) -> None:
        self._items(deletion_id, "memory", [(m.memory_id, m.user, m.row_id, "") for m in memories])

    def add_candidate_items(self, deletion_id: str, scope: ForgetScope, *, event_id: str, user: str) -> int:
        result = self._db.execute(
            text(
                f"""
                INSERT INTO deletion_items (deletion_id, kind, item_id, tenant, user_id)
                SELECT :deletion_id, 'candidate', c.candidate_id, c.tenant, c.user_id FROM candidates c
                WHERE c.tenant = :tenant AND {_CANDIDATES_OF[scope]}
                ON CONFLICT DO NOTHING
                """
            ),
            {"deletion_id": deletion_id, "tenant": self._tenant, "event_id": event_id, "user": user},
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def add_event_items(self, deletion_id: str, events: Sequence[EventItem]) -> None:
        self._items(deletion_id, "event", [(e.event_id, e.user, None, e.content_ref) for e in events])

    def add_user_event_items(self, deletion_id: str, user: str) -> int:
        result = self._db.execute(_USER_EVENTS, {"deletion_id": deletion_id, "tenant": self._tenant, "user": user})
        return int(result.rowcount)  # type: ignore[attr-defined]

    def get(self, deletion_id: str) -> Deletion | None:
        found = self._run("SELECT * FROM deletions WHERE tenant = :tenant AND deletion_id = :id", id=deletion_id)
        if not found:
            return None
        steps = self._run(
            "SELECT location, state, error, completed_at, attempts FROM deletion_steps"
            " WHERE tenant = :tenant AND deletion_id = :id",
            id=deletion_id,
        )
        return _deletion(found[0], sorted((_step(s) for s in steps), key=_display_order))

    def memory_items(self, deletion_id: str) -> list[MemoryRef]:
        rows = self._run(
            "SELECT item_id, row_id, user_id FROM deletion_items"
            " WHERE tenant = :tenant AND deletion_id = :id AND kind = 'memory' ORDER BY row_id",
            id=deletion_id,
        )
        return [MemoryRef(str(r.item_id), int(r.row_id), str(r.user_id), "deleted") for r in rows]

    def event_items(self, deletion_id: str, *, open_only: bool) -> list[EventItem]:
        rows = self._run(
            "SELECT item_id, user_id, content_ref FROM deletion_items"
            " WHERE tenant = :tenant AND deletion_id = :id AND kind = 'event'"
            + (" AND NOT done" if open_only else "")
            + " ORDER BY item_id",
            id=deletion_id,
        )
        return [EventItem(str(r.item_id), str(r.user_id), str(r.content_ref)) for r in rows]

    def mark_events_done(self, deletion_id: str, event_ids: Sequence[str]) -> None:
        if event_ids:
            self._run(
                "UPDATE deletion_items SET done = true WHERE tenant = :tenant AND deletion_id = :id"
                " AND kind = 'event' AND item_id = ANY(:ids)",
                id=deletion_id,
                ids=list(event_ids),
                fetch=False,
            )

    def mark_step(self, deletion_id: str, location: str, state: StepState, error: str, now: datetime) -> None:
        self._run(
            """
            UPDATE deletion_steps SET state = :state, error = :error, attempts = attempts + 1, updated_at = :now,
                   completed_at = CASE WHEN :state = 'done' THEN :now ELSE NULL END
            WHERE tenant = :tenant AND deletion_id = :id AND location = :location AND state <> 'done'
            """,
            id=deletion_id,
            location=location,
            state=state.value,
            error=error[:500],
            now=now,
            fetch=False,
        )

    def _items(self, deletion_id: str, kind: str, rows: Sequence[tuple[str, str, int | None, str]]) -> None:
        unique = _merged(rows)
        if unique:
            self._db.execute(
                _ADD_ITEMS,
                {
                    "deletion_id": deletion_id,
                    "kind": kind,
                    "tenant": self._tenant,
                    "item_ids": [item_id for item_id, _, _, _ in unique],
                    "user_ids": [user for _, user, _, _ in unique],
                    "row_ids": [row_id for _, _, row_id, _ in unique],
                    "content_refs": [content_ref for _, _, _, content_ref in unique],
                },
            )

    def _run(self, sql: str, *, fetch: bool = True, **params: Any) -> list[Any]:
        result = self._db.execute(text(sql), {"tenant": self._tenant, **params})
        return list(result.all()) if fetch else []


def _merged(rows: Sequence[tuple[str, str, int | None, str]]) -> list[tuple[str, str, int | None, str]]:
    """One row per item id; a repeat fills only what the first left empty (as ON CONFLICT does)."""
    merged: dict[str, tuple[str, str, int | None, str]] = {}
    for item_id, user, row_id, ref in rows:
        _, kept_user, kept_row, kept_ref = merged.get(item_id, (item_id, "", None, ""))
        merged[item_id] = (item_id, kept_user or user, kept_row if kept_row is not None else row_id, kept_ref or ref)
    return list(merged.values())


def _ref(row: Any) -> MemoryRef:
    return MemoryRef(str(row.memory_id), int(row.row_id), str(row.user_id), str(row.status), row.supersedes)


def _step(row: Any) -> DeletionStep:
    return DeletionStep(
        location=str(row.location),
        state=StepState(row.state),
        error=str(row.error),
        completed_at=row.completed_at,
        attempts=int(row.attempts),
    )


_ORDER = (RETRIEVAL, MEMORY_ROWS, VECTORS, DERIVED_RECORDS, STREAMS, CONTENT_BLOBS)


def _display_order(step: DeletionStep) -> tuple[int, str]:
    return (_ORDER.index(step.location) if step.location in _ORDER else len(_ORDER), step.location)


def _deletion(row: Any, steps: list[DeletionStep]) -> Deletion:
    return Deletion(
        deletion_id=str(row.deletion_id),
        tenant=str(row.tenant),
        scope=ForgetScope(row.scope),
        requested_by=str(row.requested_by),
        created_at=row.created_at,
        memory_id=str(row.memory_id),
        user=str(row.user_id),
        event_id=str(row.event_id),
        source_request_id=str(row.source_request_id),
        request_id=str(row.request_id),
        memories_affected=int(row.memories_affected),
        completed_at=row.completed_at,
        steps=tuple(steps),
    )
