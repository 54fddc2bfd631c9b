"""The few exceptions a memloop call can raise, each carrying what the server said and why.

Servers answer a failed call with a canonical code and a `google.rpc.Status` whose details hold an
`ErrorInfo` (a stable UPPER_SNAKE `reason`) and, for bad input, a `BadRequest` naming each field.
The client maps that once, here, so agent code catches `InvalidArgument` and reads `.field`
instead of parsing messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from memloop_client._gen.google.rpc import error_details_pb2, status_pb2

_STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One invalid field of a request, as the server named it (`content.body`, `k`)."""

    field: str
    description: str


class MemloopError(Exception):
    """A call failed. `code` is the gRPC status name; `reason` the server's ErrorInfo reason."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "UNKNOWN",
        reason: str = "",
        domain: str = "",
        violations: tuple[FieldViolation, ...] = (),
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason or code
        self.domain = domain
        self.violations = violations
        self.attempts = attempts

    @property
    def field(self) -> str:
        """The first invalid field, or '' when the error is not about one field."""
        return self.violations[0].field if self.violations else ""

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"


class InvalidArgument(MemloopError):
    """The request was rejected before anything was written; `field` says which input."""


class Unauthenticated(MemloopError):
    """No token, or a token the server does not accept (expired tokens are refreshed first)."""


class PermissionDenied(MemloopError):
    """The token may not act for that tenant, or lacks the role the call needs."""


class NotFound(MemloopError):
    """The memory, deletion or review item does not exist (for this tenant)."""


class Conflict(MemloopError):
    """The target's state forbids the call (FAILED_PRECONDITION, ALREADY_EXISTS, ABORTED)."""


class Unavailable(MemloopError):
    """The service could not be reached within the call's total deadline, retries included."""


_BY_CODE: dict[grpc.StatusCode, type[MemloopError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.OUT_OF_RANGE: InvalidArgument,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.FAILED_PRECONDITION: Conflict,
    grpc.StatusCode.ALREADY_EXISTS: Conflict,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
}

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
"""Codes retried with the same request (and, for record, the same request id)."""


def from_status(
    code: grpc.StatusCode, message: str, trailing: tuple[tuple[str, str | bytes], ...] | None, *, attempts: int = 1
) -> MemloopError:
    """The exception for a failed call, with reason, domain and field violations from its details."""
    reason, domain, violations = _details(trailing or ())
    kind = _BY_CODE.get(code, MemloopError)
    return kind(message, code=code.name, reason=reason, domain=domain, violations=violations, attempts=attempts)


def _details(
    trailing: tuple[tuple[str, str | bytes], ...],
) -> tuple[str, str, tuple[FieldViolation, ...]]:
    raw = next((value for key, value in trailing if key == _STATUS_DETAILS_KEY), None)
    if not isinstance(raw, bytes):
        return "", "", ()
    status = status_pb2.Status.FromString(raw)
    reason, domain, violations = "", "", []
    for detail in status.details:
        kind = detail.type_url.rsplit("/", 1)[-1]
        if kind == "google.rpc.ErrorInfo":
            info = error_details_pb2.ErrorInfo.FromString(detail.value)
            reason, domain = info.reason, info.domain
        elif kind == "google.rpc.BadRequest":
            bad = error_details_pb2.BadRequest.FromString(detail.value)
            violations += [FieldViolation(v.field, v.description) for v in bad.field_violations]
    return reason, domain, tuple(violations)
