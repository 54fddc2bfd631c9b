"""Statement execution for the repositories, with the one translation of database races.

A unique violation on a one-active index, a deadlock or a serialisation failure means another
transaction won a race; it surfaces as SupersessionConflict so the use case can retry its whole
unit of work. Every other database error is a bug and propagates unchanged.
"""

from __future__ import annotations

from typing import Any

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


def as_conflict(exc: DBAPIError) -> SupersessionConflict | None:
    """The SupersessionConflict a database error stands for, or None if it is not a lost race."""
    orig = exc.orig
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
