"""Learned procedures' error family (ADR-0102), raised by the domain and the use cases alike.

All are `services.common.errors` subclasses with a stable `reason` (and a field for invalid input),
so `@grpc_method` maps them to canonical codes in one place, like every other capability's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.common.errors import Aborted, FailedPrecondition, InvalidArgument, NotFound
from services.common.never_suppress import SuppressionMatch

if TYPE_CHECKING:  # the model imports these errors; the status enum is needed for annotations only
    from services.memory.procedures.domain.procedures import ProcedureStatus


class InvalidProcedure(InvalidArgument):
    """A command or row breaks a field rule; `field` names it for a BadRequest field violation."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field


class ProcedureSuppresses(InvalidArgument):
    """A procedure's text would reduce scrutiny; `field` says which text, `match` which never-suppress
    rule matched. Invalid input: a learned procedure may only add scrutiny."""

    reason = "NEVER_SUPPRESS"

    def __init__(self, field: str, match: SuppressionMatch) -> None:
        super().__init__(
            field,
            f"refused by the never-suppress rule {match.rule!r} (matched {match.matched!r}): "
            "a learned procedure may only add scrutiny",
        )
        self.field = field
        self.match = match


class IllegalTransition(FailedPrecondition):
    """The lifecycle does not allow this move (e.g. confirming a row that is not a draft)."""

    reason = "ILLEGAL_TRANSITION"

    def __init__(self, procedure_id: str, current: ProcedureStatus, wanted: ProcedureStatus) -> None:
        super().__init__(f"procedure {procedure_id} is {current.value}; it cannot become {wanted.value}")
        self.procedure_id = procedure_id
        self.current = current
        self.wanted = wanted


class LineageConflict(Aborted):
    """The rows handed to a planner do not describe one consistent intent (stale or foreign read);
    the caller may retry on a fresh read."""

    reason = "LINEAGE_CONFLICT"


class ProcedureNotFound(NotFound):
    reason = "LEARNED_PROCEDURE_NOT_FOUND"


class ProcedureNotAdmissible(FailedPrecondition):
    """An approved candidate cannot become a learned procedure (never-suppress or a field rule);
    the whole approval is refused, so nothing of it is written."""
