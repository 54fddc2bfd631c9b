"""Channels to other memloop services, carrying the bearer token and trace context on every call.

With `tls` (the process's MEMLOOP_TLS files, `CommonSettings.tls`) a channel verifies the peer's
certificate against the CA and presents the process's own (mTLS); without, it is plaintext.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from opentelemetry.instrumentation.grpc import aio_client_interceptors, client_interceptor
from opentelemetry.instrumentation.grpc.grpcext import intercept_channel

from services.common.tls import TlsFiles, channel_credentials


class _BearerInterceptor(grpc.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        metadata = [*(details.metadata or ()), self._header]
        return continuation(details._replace(metadata=metadata), request)


class _AioBearerInterceptor(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self._header)
        new_details = grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )
        return await continuation(new_details, request)


# A peer that was down must be retried within seconds of coming back, not after gRPC's default
# two-minute reconnect backoff; otherwise an outage that has ended keeps failing calls.
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]


def sync_channel(target: str, token: str, tls: TlsFiles | None = None) -> grpc.Channel:
    if tls is None:
        channel = grpc.insecure_channel(target, options=_CHANNEL_OPTIONS)
    else:
        channel = grpc.secure_channel(target, channel_credentials(tls), options=_CHANNEL_OPTIONS)
    # OpenTelemetry's interceptor is not a grpc.*ClientInterceptor; it needs its own intercept_channel.
    traced = intercept_channel(channel, client_interceptor())  # type: ignore[no-untyped-call]
    return grpc.intercept_channel(traced, _BearerInterceptor(token))


def aio_channel(target: str, token: str, tls: TlsFiles | None = None) -> grpc.aio.Channel:
    interceptors: list[Any] = [*aio_client_interceptors(), _AioBearerInterceptor(token)]  # type: ignore[no-untyped-call]
    if tls is None:
        return grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS, interceptors=interceptors)
    return grpc.aio.secure_channel(
        target, channel_credentials(tls), options=_CHANNEL_OPTIONS, interceptors=interceptors
    )
