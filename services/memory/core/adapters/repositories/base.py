"""Statement execution for the repositories, with the one translation of database races.

A unique violation on a one-active index, a deadlock or a serialisation failure means another
transaction won a race; it surfaces as SupersessionConflict so the use case can retry its whole
unit of work. Every other database error is a bug and propagates unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg.rows import namedtuple_row
from sqlalchemy import Executable, Result
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from services.memory.core.domain.errors import SupersessionConflict

_ONE_ACTIVE_INDEXES = frozenset(
    {
        "memories_one_active_intent",
        "memories_one_active_meaning",
        "ux_learned_proc_active_intent",
        "ux_learned_proc_intent_version",
    }
)
_RACE_STATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected


Statement = tuple[str, dict[str, Any]]
"""A statement in psycopg's own form (`%(name)s` placeholders) and its parameters."""


def as_conflict(exc: DBAPIError) -> SupersessionConflict | None:
    """The SupersessionConflict a database error stands for, or None if it is not a lost race."""
    return conflict_of(exc.orig)


def conflict_of(orig: BaseException | None) -> SupersessionConflict | None:
    """`as_conflict` for the driver's own error (statements sent by `Db.run`)."""
    state = getattr(orig, "sqlstate", None)
    diag = getattr(orig, "diag", None)
    constraint = getattr(diag, "constraint_name", None)
    if state == "23505" and constraint in _ONE_ACTIVE_INDEXES:
        return SupersessionConflict(f"another transaction holds the active record ({constraint})")
    if state in _RACE_STATES:
        return SupersessionConflict(f"concurrent transaction conflict (SQLSTATE {state})")
    return None


class Db:
    """A tenant-scoped session handle shared by one unit of work's repositories.

    `deferring` (set by the unit of work's `defer_appends`) lets a repository queue an append-only
    row in `pending` instead of writing it: the unit of work writes each table's queue as one
    multi-row statement just before its commit, so a batch of events costs a few statements
    instead of one round trip per row.
    """

    def __init__(self, session: Session, tenant: str) -> None:
        self.session = session
        self.tenant = tenant
        self.deferring = False
        self.pending: dict[str, list[dict[str, Any]]] = {}

    def defer(self, table: str, row: dict[str, Any]) -> None:
        self.pending.setdefault(table, []).append(row)

    def take(self, table: str) -> list[dict[str, Any]]:
        return self.pending.pop(table, [])

    def run(self, statements: Sequence[Statement], *, commit: bool = False) -> None:
        """Send `statements` (and the COMMIT, with `commit`) as ONE psycopg pipeline: one round trip
        for a batch's queued writes instead of one per table. The server runs them in order in this
        transaction; the first error aborts the rest and is raised here (a lost race translated
        as in `execute`)."""
        if not statements and not commit:
            return
        raw = self.session.connection().connection.dbapi_connection
        if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
            raise TypeError("memory needs the psycopg 3 driver")
        try:
            with raw.pipeline(), raw.cursor() as cursor:
                for sql, params in statements:
                    cursor.execute(sql, params)
                if commit:
                    raw.commit()
        except psycopg.Error as exc:
            conflict = conflict_of(exc)
            if conflict is not None:
                raise conflict from exc
            raise

    def fetch(self, statements: Sequence[Statement]) -> list[list[Any]]:
        """Run `statements` as ONE psycopg pipeline and return each one's rows (named tuples), in
        order: reads that do not depend on each other's answers, in one round trip."""
        raw = self.session.connection().connection.dbapi_connection
        if not isinstance(raw, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
            raise TypeError("memory needs the psycopg 3 driver")
        cursors = [raw.cursor(row_factory=namedtuple_row) for _ in statements]
        try:
            with raw.pipeline():
                for cursor, (sql, params) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params)
            return [cursor.fetchall() if cursor.description is not None else [] for cursor in cursors]
        except psycopg.Error as exc:
            conflict = conflict_of(exc)
            if conflict is not None:
                raise conflict from exc
            raise
        finally:
            for cursor in cursors:
                cursor.close()

    def execute(
        self, statement: Executable, params: dict[str, Any] | list[dict[str, Any]] | None = None
    ) -> Result[Any]:
        try:
            return self.session.execute(statement, params)
        except DBAPIError as exc:
            conflict = as_conflict(exc)
            if conflict is not None:
                raise conflict from exc
            raise


def unnest_insert(
    table: str, types: Mapping[str, str], rows: Sequence[Mapping[str, Any]], *, suffix: str = ""
) -> list[Statement]:
    """Rows as ONE `INSERT ... SELECT FROM unnest(arrays)` in their order (no statement or none):
    one array parameter per column, so the SQL text is the same for any number of rows (psycopg
    prepares it once) and the server runs one statement, not one per row. `types` maps each column
    to its PostgreSQL type; a `jsonb` column is sent as JSON text."""
    if not rows:
        return []
    columns = list(types)
    arrays = ", ".join(f"%({c})s::{'text' if t == 'jsonb' else t}[]" for c, t in types.items())
    values = ", ".join(f"CAST(r.{c} AS jsonb)" if t == "jsonb" else f"r.{c}" for c, t in types.items())
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values}"
        f" FROM unnest({arrays}) WITH ORDINALITY AS r({', '.join(columns)}, position) ORDER BY r.position {suffix}"
    )
    params = {c: [json.dumps(row[c]) if t == "jsonb" else row[c] for row in rows] for c, t in types.items()}
    return [(sql, params)]
