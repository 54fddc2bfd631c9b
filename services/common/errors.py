"""Domain errors raised low in any service and mapped once, at the gRPC edge, to google.rpc.Status.

Every error carries a stable UPPER_SNAKE `reason` for `google.rpc.ErrorInfo`; invalid input also
names the offending field in a `google.rpc.BadRequest`, so clients never have to parse messages.
"""

from __future__ import annotations

from dataclasses import dataclass


class MemloopError(Exception):
    """Base of every error the gRPC edge knows how to map; anything else becomes INTERNAL."""

    reason: str = "MEMLOOP_ERROR"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason


@dataclass(frozen=True)
class FieldViolation:
    """One invalid field: a dotted path (`content.body`) and why it is invalid."""

    field: str
    description: str


class InvalidArgument(MemloopError):
    """Bad input. Raised before any write, so a rejected call has written nothing."""

    reason = "INVALID_ARGUMENT"

    def __init__(self, field: str, description: str, *more: FieldViolation) -> None:
        self.violations = (FieldViolation(field, description), *more)
        super().__init__(f"{field}: {description}")


class Unauthenticated(MemloopError):
    reason = "UNAUTHENTICATED"


class PermissionDenied(MemloopError):
    reason = "PERMISSION_DENIED"


class NotFound(MemloopError):
    reason = "NOT_FOUND"


class AlreadyExists(MemloopError):
    reason = "ALREADY_EXISTS"


class FailedPrecondition(MemloopError):
    """The target is in a state that forbids the call (e.g. superseding a superseded record)."""

    reason = "FAILED_PRECONDITION"


class Aborted(MemloopError):
    """A concurrency conflict the caller may retry (e.g. a lost race on the one-active index)."""

    reason = "ABORTED"


class Unavailable(MemloopError):
    """A dependency is down; the caller should retry with backoff."""

    reason = "UNAVAILABLE"


def validate_page_size(page_size: int, *, default: int, maximum: int, field: str = "page_size") -> int:
    """AIP-158: 0 means the documented default, above the maximum is clamped, negative is invalid."""
    if page_size < 0:
        raise InvalidArgument(field, "must not be negative")
    if page_size == 0:
        return default
    return min(page_size, maximum)


def require(value: str, field: str, *, max_length: int = 256) -> str:
    """Reject an empty or oversized identifier, naming the field."""
    if not value or not value.strip():
        raise InvalidArgument(field, "is required")
    if len(value) > max_length:
        raise InvalidArgument(field, f"must be at most {max_length} characters")
    return value
