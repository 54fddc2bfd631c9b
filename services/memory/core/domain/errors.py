"""Memory's domain errors: specific names over the shared canonical ones, mapped once at the edge."""

from __future__ import annotations

from services.common.errors import Aborted, FailedPrecondition, NotFound


class MemoryNotFound(NotFound):
    reason = "MEMORY_NOT_FOUND"


class MemoryNotActive(FailedPrecondition):
    """A transition that needs an active record met a superseded, deprecated or deleted one."""

    reason = "MEMORY_NOT_ACTIVE"


class SupersessionConflict(Aborted):
    """Another transaction won the one-active-per-intent (or per-meaning) race; retry the whole unit."""

    reason = "SUPERSESSION_CONFLICT"


class ReviewItemNotFound(NotFound):
    reason = "REVIEW_ITEM_NOT_FOUND"


class ReviewAlreadyResolved(FailedPrecondition):
    """A review item can be resolved once; a different second verdict is refused."""

    reason = "REVIEW_ALREADY_RESOLVED"


class RequestIdReused(FailedPrecondition):
    """A request_id already used for a different change: idempotency keys name one change only."""

    reason = "REQUEST_ID_REUSED"
