"""Retrieval's database re-check in one message: which hits are still active, with their rows.

Every search confirms its index hits against the database (the index may lag a commit made on
another replica; a deleted or superseded memory must never be returned). Through the unit of work
that cost a pool ping, the transaction with its tenant setting, the rows, their sources and the
rollback: five round trips, each waiting for a PostgreSQL backend to be scheduled, which on a
busy machine is most of a search's time. Then a psycopg pipeline sent them together, but the
client still woke five times per read (sends, the results of each statement, the sync), and on a
loaded 2-core machine each wake-up is a chance to wait for a core: `bench/bench_search.py --probe`
found the re-check at 7-27 ms of wall time for 1.5-2 ms of CPU in a typical user's slowest calls.

Now each read is ONE simple-protocol message, `BEGIN; set_config(tenant, local); EXECUTE
<statement>(...); COMMIT`, answered in one flush: the client waits once. The statement is
PREPAREd on the connection the first time it is used there (server-side plan cache, as psycopg's
automatic preparation gave the pipeline), and its arguments are bound client-side by psycopg's
`ClientCursor` (quoted literals, cast to the statement's declared parameter types). The same
row-level-security guarantee (the server runs the statements in order, so the select sees the
tenant, and the setting ends with the transaction) and the same explicit tenant/user/active filter.
A connection that lost its prepared statements (DISCARD ALL, DEALLOCATE) prepares them again.

The connection comes from a pool without pre-ping (that ping is a round trip of its own); a
connection found dead is discarded and the read retried once on a fresh one.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.rows import namedtuple_row
from sqlalchemy import Engine

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.repositories.memories import RECORD_COLUMNS as _COLUMNS
from services.memory.core.adapters.repositories.memories import record_from_row
from services.memory.core.domain.model import MemoryRecord


@dataclass(frozen=True)
class _Statement:
    """A read prepared once per connection: its name, its parameters (name and SQL type, in $n
    order) and its body, which names them $1..$n."""

    name: str
    params: tuple[tuple[str, str], ...]
    body: str

    @property
    def prepare(self) -> str:
        return f"PREPARE {self.name}({', '.join(kind for _, kind in self.params)}) AS {self.body}"

    @property
    def script(self) -> str:
        """The whole read as one message: psycopg's `ClientCursor` binds the %(name)s literals."""
        arguments = ", ".join(f"%({name})s::{kind}" for name, kind in self.params)
        return (
            "BEGIN; SELECT set_config('memloop.tenant', %(memloop_tenant)s, true);"
            f" EXECUTE {self.name}({arguments}); COMMIT"
        )


_ACTIVE_BY_ROW_IDS = _Statement(
    "memloop_active_by_row_ids",
    (("row_ids", "bigint[]"), ("tenant", "text"), ("user", "text"), ("types", "text[]"), ("first", "bigint")),
    f"""
    SELECT {_COLUMNS}
    FROM unnest($1) WITH ORDINALITY AS hit(row_id, rank)
    JOIN memories m ON m.row_id = hit.row_id
    WHERE m.tenant = $2 AND m.user_id = $3 AND m.status = 'active'
      AND (cardinality($4) = 0 OR m.type = ANY($4))
    ORDER BY hit.rank
    LIMIT $5
""",
)
"""In hit order, the first `first` (LIMIT NULL: all). PostgreSQL evaluates the sources subquery
after the LIMIT, so a search that over-fetched 40 hits reads the sources of the 10 it returns."""
_ACTIVE_FOR_CONFLICTS = _Statement(
    "memloop_active_for_conflicts",
    (
        ("tenant", "text"),
        ("intent_users", "text[]"),
        ("intents", "text[]"),
        ("hit_users", "text[]"),
        ("row_ids", "bigint[]"),
    ),
    f"""
    SELECT {_COLUMNS}
    FROM memories m
    WHERE m.tenant = $1 AND m.status = 'active'
      AND ((m.user_id, m.intent_key) IN (SELECT * FROM unnest($2, $3))
           OR (m.user_id, m.row_id) IN (SELECT * FROM unnest($4, $5)))
""",
)
"""FindConflicts' one read: the active records of each user's intents and of its index hits."""
_PROCESSED_AMONG = _Statement(
    "memloop_processed_among",
    (("tenant", "text"), ("event_ids", "text[]")),
    """
    SELECT event_id, outcome, processed_at FROM processed_events
    WHERE tenant = $1 AND event_id = ANY($2)
""",
)


class SqlActiveReader:
    """`ActiveMemories` port on PostgreSQL (psycopg 3); thread-safe (one pooled connection per call)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._prepared: weakref.WeakKeyDictionary[psycopg.Connection[Any], set[str]] = weakref.WeakKeyDictionary()
        """Connection → the statements PREPAREd on it (a reconnect is a new connection object)."""

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

    def _read_retried(self, tenant: str, statement: _Statement, params: dict[str, object]) -> list[MemoryRecord]:
        return [record_from_row(row, tuple(row.sources)) for row in self._rows_retried(tenant, statement, params)]

    def _rows_retried(self, tenant: str, statement: _Statement, params: dict[str, object]) -> list[Any]:
        try:
            return self._read(tenant, statement, params)
        except psycopg.OperationalError:  # a pooled connection the server closed: once more, fresh
            return self._read(tenant, statement, params)
        except errors.InvalidSqlStatementName:  # the connection's statements were deallocated: again
            return self._read(tenant, statement, params)

    def _read(self, tenant: str, statement: _Statement, params: dict[str, object]) -> list[Any]:
        with self._engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
                raise TypeError("memory needs the psycopg 3 driver")
            prepared = self._prepared.setdefault(raw, set())
            raw.autocommit = True  # the script carries its own BEGIN and COMMIT: no implicit BEGIN first
            try:
                with psycopg.ClientCursor(raw, row_factory=namedtuple_row) as cursor:
                    if statement.name not in prepared:
                        cursor.execute(statement.prepare)
                        prepared.add(statement.name)
                    cursor.execute(statement.script, {**params, "memloop_tenant": tenant})
                    cursor.nextset()  # past BEGIN's and set_config's results, to the rows
                    cursor.nextset()
                    found = cursor.fetchall()
            except errors.InvalidSqlStatementName:
                prepared.clear()
                raise
            except psycopg.OperationalError:
                connection.invalidate()
                raise
            finally:
                if not raw.closed:
                    if raw.pgconn.transaction_status != pq.TransactionStatus.IDLE:
                        raw.rollback()  # a failed script leaves its transaction open
                    raw.autocommit = False
        return found
