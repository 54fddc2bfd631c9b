"""Retrieval's database re-check in one round trip: which hits are still active, with their rows.

Every search confirms its index hits against the database (the index may lag a commit made on
another replica; a deleted or superseded memory must never be returned). Through the unit of work
that cost a pool ping, the transaction with its tenant setting, the rows, their sources and the
rollback: five round trips, each waiting for a PostgreSQL backend to be scheduled, which on a
busy machine is most of a search's time. Here the transaction, the tenant setting (row-level
security's scope, local to the transaction), one statement for the rows with their sources, and
the commit are sent as one psycopg pipeline: one round trip, the same RLS guarantee (the server
runs them in order, so the select sees the tenant), the same explicit tenant/user/active filter.

The connection comes from a pool without pre-ping (that ping is a round trip of its own); a
connection found dead is discarded and the read retried once on a fresh one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import namedtuple_row
from sqlalchemy import Engine

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.repositories.memories import RECORD_COLUMNS as _COLUMNS
from services.memory.core.adapters.repositories.memories import record_from_row
from services.memory.core.domain.model import MemoryRecord

_ACTIVE_BY_ROW_IDS = f"""
    SELECT {_COLUMNS}
    FROM unnest(%(row_ids)s::bigint[]) WITH ORDINALITY AS hit(row_id, rank)
    JOIN memories m ON m.row_id = hit.row_id
    WHERE m.tenant = %(tenant)s AND m.user_id = %(user)s AND m.status = 'active'
      AND (cardinality(%(types)s::text[]) = 0 OR m.type = ANY(%(types)s::text[]))
    ORDER BY hit.rank
    LIMIT %(first)s
"""
"""In hit order, the first `first` (LIMIT NULL: all). PostgreSQL evaluates the sources subquery
after the LIMIT, so a search that over-fetched 40 hits reads the sources of the 10 it returns."""
_ACTIVE_FOR_CONFLICTS = f"""
    SELECT {_COLUMNS}
    FROM memories m
    WHERE m.tenant = %(tenant)s AND m.status = 'active'
      AND ((m.user_id, m.intent_key) IN (SELECT * FROM unnest(%(intent_users)s::text[], %(intents)s::text[]))
           OR (m.user_id, m.row_id) IN (SELECT * FROM unnest(%(hit_users)s::text[], %(row_ids)s::bigint[])))
"""
"""FindConflicts' one read: the active records of each user's intents and of its index hits."""
_PROCESSED_AMONG = """
    SELECT event_id, outcome, processed_at FROM processed_events
    WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s::text[])
"""
_SET_TENANT = "SELECT set_config('memloop.tenant', %s, true)"


class SqlActiveReader:
    """`ActiveMemories` port on PostgreSQL (psycopg 3); thread-safe (one pooled connection per call)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def active_by_row_ids(
        self,
        tenant: str,
        user: str,
        row_ids: Sequence[int],
        *,
        types: frozenset[MemoryType] = frozenset(),
        first: int | None = None,
    ) -> list[MemoryRecord]:
        if not row_ids or first == 0:
            return []
        params: dict[str, object] = {
            "tenant": tenant,
            "user": user,
            "row_ids": list(row_ids),
            "types": sorted(t.value for t in types),
            "first": first,
        }
        return self._read_retried(tenant, _ACTIVE_BY_ROW_IDS, params)

    def active_for_conflicts(
        self, tenant: str, intents: Sequence[tuple[str, str]], hits: Sequence[tuple[str, int]]
    ) -> list[MemoryRecord]:
        """The active records of (user, intent key) pairs and of (user, row id) index hits, in one
        round trip however many users and candidates a FindConflicts call carries; no order."""
        if not intents and not hits:
            return []
        params: dict[str, object] = {
            "tenant": tenant,
            "intent_users": [user for user, _ in intents],
            "intents": [intent for _, intent in intents],
            "hit_users": [user for user, _ in hits],
            "row_ids": [row_id for _, row_id in hits],
        }
        return self._read_retried(tenant, _ACTIVE_FOR_CONFLICTS, params)

    def processed_among(self, tenant: str, event_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], datetime]]:
        """The processed ones among `event_ids` (outcome, processed time), in one round trip: the
        worker asks this first for every batch, and a unit of work made it four."""
        if not event_ids:
            return {}
        params: dict[str, object] = {"tenant": tenant, "event_ids": list(dict.fromkeys(event_ids))}
        rows = self._rows_retried(tenant, _PROCESSED_AMONG, params)
        return {row.event_id: (dict(row.outcome), row.processed_at) for row in rows}

    def _read_retried(self, tenant: str, query: str, params: dict[str, object]) -> list[MemoryRecord]:
        return [record_from_row(row, tuple(row.sources)) for row in self._rows_retried(tenant, query, params)]

    def _rows_retried(self, tenant: str, query: str, params: dict[str, object]) -> list[Any]:
        try:
            return self._read(tenant, query, params)
        except psycopg.OperationalError:  # a pooled connection the server closed: once more, fresh
            return self._read(tenant, query, params)

    def _read(self, tenant: str, query: str, params: dict[str, object]) -> list[Any]:
        with self._engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
                raise TypeError("memory needs the psycopg 3 driver")
            try:
                with raw.cursor() as scope, raw.cursor(row_factory=namedtuple_row) as rows:
                    with raw.pipeline():
                        scope.execute(_SET_TENANT, (tenant,))
                        rows.execute(query, params)
                        raw.commit()
                    found = rows.fetchall()
            except psycopg.OperationalError:
                connection.invalidate()
                raise
        return found
