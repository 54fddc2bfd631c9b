"""What every call carries and how one call is attempted: shared by the sync and asyncio clients.

Each call is described once (`Call`: which service, which method, the request, how to read the
response); the two clients differ only in how they wait. Per attempt the metadata holds the bearer
token (from the token source, refreshed by its callback), the W3C `traceparent` (the same for every
attempt of a call, so the retries of one call are one trace) and the contract version this client
was generated from.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from memloop_client._gen.contract import CONTRACT_VERSION

Out = TypeVar("Out")
TokenProvider = Callable[[], str]
CONTRACT_HEADER = "x-memloop-contract"
_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")

# Reconnect within a fraction of a second of a restarted server coming back, not after gRPC's
# default two-minute reconnect backoff; the client's own retry policy paces the attempts. Not
# "grpc.min_reconnect_backoff_ms": gRPC takes it as how long a connection attempt may last, and at
# 100 ms a server slow to finish the handshake (a loaded host) failed every call with UNAVAILABLE.
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.enable_retries", 0),
]


@dataclass(frozen=True)
class Call(Generic[Out]):
    """One RPC to make: `service` is "serving" or "memory"; `parse(response, attempts)` reads it."""

    service: Literal["serving", "memory"]
    method: str
    request: Any
    parse: Callable[[Any, int], Out]


class TokenSource:
    """The bearer token: a fixed string, or a callback asked for a fresh one.

    With a callback the token is fetched lazily, fetched again shortly before the expiry a JWT
    declares (read, never verified: that is the server's job), and again when the server answers
    UNAUTHENTICATED with reason TOKEN_EXPIRED (the call is then retried once).
    """

    def __init__(self, token: str | TokenProvider, *, refresh_margin: float = 30.0) -> None:
        self._provider = token if callable(token) else None
        self._token = "" if callable(token) else token
        self._margin = refresh_margin
        self._lock = threading.Lock()

    @property
    def refreshable(self) -> bool:
        return self._provider is not None

    def current(self) -> str:
        with self._lock:
            if self._provider is not None and (not self._token or _expires_within(self._token, self._margin)):
                self._token = self._provider()
            return self._token

    def refresh(self) -> None:
        with self._lock:
            if self._provider is not None:
                self._token = self._provider()


def _expires_within(token: str, seconds: float) -> bool:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"]) - time.time() < seconds
    except (IndexError, ValueError, KeyError, TypeError):
        return False  # not a JWT we can read: keep it until the server says it expired


_explicit_traceparent: contextvars.ContextVar[str | None] = contextvars.ContextVar("memloop_traceparent", default=None)


@contextlib.contextmanager
def trace_context(traceparent: str) -> Iterator[None]:
    """Make calls inside the block join the trace of `traceparent` (W3C format), without OpenTelemetry."""
    if not _TRACEPARENT.match(traceparent):
        raise ValueError(f"not a W3C traceparent: {traceparent!r}")
    token = _explicit_traceparent.set(traceparent)
    try:
        yield
    finally:
        _explicit_traceparent.reset(token)


def current_traceparent() -> str:
    """The caller's trace: an explicit `trace_context`, else OpenTelemetry's current span when
    OpenTelemetry is installed, else a fresh trace for this call."""
    explicit = _explicit_traceparent.get()
    if explicit:
        return f"00-{explicit[3:35]}-{secrets.token_hex(8)}-{explicit[-2:]}"
    otel = _otel_traceparent()
    if otel:
        return otel
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def _otel_traceparent() -> str:
    try:
        from opentelemetry import trace
    except ImportError:
        return ""
    span = trace.get_current_span().get_span_context()
    if not span.is_valid:
        return ""
    return f"00-{span.trace_id:032x}-{span.span_id:016x}-{int(span.trace_flags):02x}"


def trace_id_of(traceparent: str) -> str:
    return traceparent[3:35]


def metadata(tokens: TokenSource, traceparent: str) -> tuple[tuple[str, str], ...]:
    return (
        ("authorization", f"Bearer {tokens.current()}"),
        ("traceparent", traceparent),
        (CONTRACT_HEADER, CONTRACT_VERSION),
    )
