"""Map domain errors to canonical gRPC codes with google.rpc.Status details, in one place."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.common import errors

_log = logging.getLogger(__name__)

_CODES: dict[type[errors.MemloopError], int] = {
    errors.InvalidArgument: code_pb2.INVALID_ARGUMENT,
    errors.Unauthenticated: code_pb2.UNAUTHENTICATED,
    errors.PermissionDenied: code_pb2.PERMISSION_DENIED,
    errors.NotFound: code_pb2.NOT_FOUND,
    errors.AlreadyExists: code_pb2.ALREADY_EXISTS,
    errors.FailedPrecondition: code_pb2.FAILED_PRECONDITION,
    errors.Aborted: code_pb2.ABORTED,
    errors.Unavailable: code_pb2.UNAVAILABLE,
}


# The status travels in the trailers, which gRPC caps (8 KiB by default, hard limit 16 KiB): a message
# that echoed a client's 100k-character field would turn the real code into RESOURCE_EXHAUSTED.
MAX_MESSAGE_CHARS = 512
MAX_FIELD_CHARS = 256
MAX_VIOLATIONS = 10


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def to_status(error: errors.MemloopError, *, domain: str) -> status_pb2.Status:
    """The google.rpc.Status of a domain error, with every client-influenced text bounded."""
    code = next((c for t, c in _CODES.items() if isinstance(error, t)), code_pb2.INTERNAL)
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=_bounded(error.reason, MAX_FIELD_CHARS), domain=domain))
    details = [info]
    if isinstance(error, errors.InvalidArgument):
        bad = any_pb2.Any()
        bad.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=_bounded(v.field, MAX_FIELD_CHARS), description=_bounded(v.description, MAX_MESSAGE_CHARS)
                    )
                    for v in error.violations[:MAX_VIOLATIONS]
                ]
            )
        )
        details.append(bad)
    return status_pb2.Status(code=code, message=_bounded(error.message, MAX_MESSAGE_CHARS), details=details)


def abort_with(context: grpc.ServicerContext, error: errors.MemloopError, *, domain: str) -> NoReturn:
    context.abort_with_status(rpc_status.to_status(to_status(error, domain=domain)))
    raise AssertionError("unreachable: abort_with_status raises")  # pragma: no cover


F = TypeVar("F", bound=Callable[..., Any])


def grpc_method(domain: str) -> Callable[[F], F]:
    """Decorate a servicer method so domain errors become their canonical status.

    Anything that is not a MemloopError is a bug: it is logged with its traceback and
    returned as INTERNAL without leaking its message.
    """

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
            try:
                return method(self, request, context)
            except errors.MemloopError as exc:
                abort_with(context, exc, domain=domain)
            except Exception as exc:
                if _is_abort(exc):
                    raise
                if _is_database_unreachable(exc):
                    # PostgreSQL restarting or unreachable: the caller should retry, not report a bug.
                    _log.warning("database unreachable in %s: %s", method.__qualname__, _database_error(exc))
                    unavailable = errors.Unavailable("database unavailable; retry", reason="DATABASE_UNAVAILABLE")
                    abort_with(context, unavailable, domain=domain)
                _log.exception("unhandled error in %s", method.__qualname__)
                abort_with(context, errors.MemloopError("internal error", reason="INTERNAL"), domain=domain)

        return wrapper  # type: ignore[return-value]

    return decorate


def _is_database_unreachable(exc: BaseException) -> bool:
    """A lost or refused database connection (SQLAlchemy's OperationalError/DisconnectionError, or
    psycopg's OperationalError), as opposed to a bug in a statement."""
    import psycopg
    from sqlalchemy import exc as sa_exc

    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, sa_exc.OperationalError | sa_exc.DisconnectionError | psycopg.OperationalError)


def _database_error(exc: BaseException) -> str:
    """The error's type, SQLSTATE and first line: "UndefinedFile 58P01: could not open file ...".

    The server's words are often the only account of a failure whose server log is gone; an
    operational error's message names files, hosts and states, never a statement's values.
    """
    cause = getattr(exc, "orig", None) or exc
    sqlstate = getattr(cause, "sqlstate", None)
    first_line = (str(cause).strip().splitlines() or [""])[0][:200]
    return " ".join(part for part in (type(cause).__name__, sqlstate, ":", first_line) if part).replace(" :", ":")


def _is_abort(exc: Exception) -> bool:
    # grpc raises a bare Exception from context.abort(); let it through untouched.
    return type(exc) is Exception and not exc.args


def error_details(error: grpc.RpcError) -> tuple[str, list[str]]:
    """Client side: the ErrorInfo reason and the BadRequest field names of a failed call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    reason: str = ""
    fields: list[str] = []
    if status is None:
        return reason, fields
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields.extend(v.field for v in bad.field_violations)
    return reason, fields
