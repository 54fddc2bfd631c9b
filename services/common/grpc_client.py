"""Channels to other memloop services, carrying the bearer token and trace context on every call.

With `tls` (the process's MEMLOOP_TLS files, `CommonSettings.tls`) a channel verifies the peer's
certificate against the CA and presents the process's own (mTLS); without, it is plaintext.
"""

from __future__ import annotations

import json
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
# Not "grpc.min_reconnect_backoff_ms": gRPC reads it as the time a connection attempt may take, so at
# 200 ms a peer slow to finish its handshake (an idle-priority process on a busy host: learning's
# side of serving, memory-ingest) failed the call at once with UNAVAILABLE. Unset, an attempt may
# take 20 s and a call waits for it up to its own deadline; a refused connection still fails at once.
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


# Several replicas of a peer, as one target (`ipv4:127.0.0.1:5001,127.0.0.1:5002`): calls are spread
# over the ready ones, and a replica that is down is skipped until it answers again.
_ROUND_ROBIN = ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))


def channel_options(target: str) -> list[tuple[str, Any]]:
    """The options every memloop channel gets; round_robin when `target` lists several addresses.

    A list of addresses also names the authority (the first address): gRPC's default for an
    `ipv4:` list is the whole list, which no certificate names, so with TLS every replica failed
    hostname verification. Each replica must present a certificate valid for that host (the local
    CA's are valid for 127.0.0.1; across hosts a target is one DNS name, not a list).
    """
    if "," not in target:
        return list(_CHANNEL_OPTIONS)
    first = target.removeprefix("ipv4:").split(",", 1)[0]
    return [*_CHANNEL_OPTIONS, _ROUND_ROBIN, ("grpc.default_authority", first)]


def replicas_target(addresses: list[str]) -> str:
    """One gRPC target naming several `host:port` replicas (gRPC's `ipv4:` scheme, IPv4 literals)."""
    return addresses[0] if len(addresses) == 1 else "ipv4:" + ",".join(addresses)


def sync_channel(target: str, token: str, tls: TlsFiles | None = None) -> grpc.Channel:
    if tls is None:
        channel = grpc.insecure_channel(target, options=channel_options(target))
    else:
        channel = grpc.secure_channel(target, channel_credentials(tls), options=channel_options(target))
    # OpenTelemetry's interceptor is not a grpc.*ClientInterceptor; it needs its own intercept_channel.
    traced = intercept_channel(channel, client_interceptor())  # type: ignore[no-untyped-call]
    return grpc.intercept_channel(traced, _BearerInterceptor(token))


def aio_channel(target: str, token: str, tls: TlsFiles | None = None) -> grpc.aio.Channel:
    interceptors: list[Any] = [*aio_client_interceptors(), _AioBearerInterceptor(token)]  # type: ignore[no-untyped-call]
    if tls is None:
        return grpc.aio.insecure_channel(target, options=channel_options(target), interceptors=interceptors)
    return grpc.aio.secure_channel(
        target, channel_credentials(tls), options=channel_options(target), interceptors=interceptors
    )
