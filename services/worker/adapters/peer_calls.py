"""How the worker calls a peer: one call on the peer's current channel, its failure translated.

A failed call becomes a `TransientError` (the dependency may recover: retry with backoff) or a
`PermanentError` (this event's request is wrong or names something that does not exist:
dead-letter it). Error text is built only from the status code, the peer's ErrorInfo reason and
BadRequest field names, never from the status message, so no fragment of an email can travel into
a log line or a dead-letter header. After UNAVAILABLE or DEADLINE_EXCEEDED the peer's channel is
renewed (see `channels.PeerChannel`) so a recovered peer is reached at the next attempt, not after
gRPC's reconnect backoff.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import grpc

from services.common.grpc_errors import error_details
from services.worker.adapters.channels import PeerChannel
from services.worker.service.model import PermanentError, TransientError, WorkerError

T = TypeVar("T")

#: Codes after which the same request can succeed later without anyone changing the event.
#: INTERNAL and UNKNOWN are included: a peer's bug gets the retry budget (and then the dead-letter
#: stream), which leaves time for a fix rather than dead-lettering every event at the first error.
#: UNAUTHENTICATED is an operator's problem (an expired service token), not the event's.
_TRANSIENT_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)


def translate_rpc_error(error: grpc.RpcError, *, dependency: str) -> WorkerError:
    """Map a failed call to the worker's two failure kinds; reason = `<DEPENDENCY>_<CODE>`."""
    code = error.code() if isinstance(error, grpc.Call | grpc.aio.AioRpcError) else grpc.StatusCode.UNKNOWN
    try:
        peer_reason, fields = error_details(error)
    except (ValueError, AttributeError, TypeError):
        peer_reason, fields = "", []
    return failure(code, peer_reason, fields, dependency=dependency)


def failure(code: grpc.StatusCode, peer_reason: str, fields: Sequence[str], *, dependency: str) -> WorkerError:
    """`<DEPENDENCY>_<CODE>`, transient or permanent by the code; detail names the code, the peer's
    ErrorInfo reason and the BadRequest fields, never a status message."""
    detail = " ".join(
        part
        for part in (
            f"status={code.name}",
            f"reason={peer_reason}" if peer_reason else "",
            f"fields={','.join(fields)}" if fields else "",
        )
        if part
    )
    kind = TransientError if code in _TRANSIENT_CODES else PermanentError
    return kind(f"{dependency.upper()}_{code.name}", detail, dependency=dependency)


_RENEW_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


async def call_peer(peer: PeerChannel, dependency: str, call: Callable[[grpc.aio.Channel], Awaitable[T]]) -> T:
    """Make one call on the peer's current channel, translating failures; renew the channel if unreachable."""
    try:
        return await call(peer.channel)
    except grpc.RpcError as exc:
        error = translate_rpc_error(exc, dependency=dependency)
        if isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _RENEW_CODES:
            peer.renew()
        raise error from None
    except (TimeoutError, OSError) as exc:
        peer.renew()
        raise TransientError(f"{dependency.upper()}_UNREACHABLE", type(exc).__name__, dependency=dependency) from None
