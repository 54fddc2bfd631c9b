"""Serve one or more gRPC services with the interceptors, health and reflection every service needs.

`services.common.app.run` starts it once a process's start hooks are done; on SIGTERM (or SIGINT)
`RunningServer.stop` marks the process NOT_SERVING, stops accepting calls and lets in-flight calls
finish within the drain period before the process exits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.grpc import server_interceptor
from prometheus_client import Counter, Histogram

from services.common.auth import AuthInterceptor
from services.common.settings import CommonSettings
from services.common.tls import server_credentials
from services.common.validation import ValidationInterceptor

_log = logging.getLogger(__name__)

RPC_LATENCY = Histogram("memloop_rpc_seconds", "Server-side RPC latency", ["service", "method"])
RPC_ERRORS = Counter("memloop_rpc_errors_total", "RPCs that ended with an exception", ["service", "method"])


@dataclass(frozen=True)
class Registration:
    """One servicer and the generated function that adds it to a server."""

    add_to_server: Callable[[Any, grpc.Server], None]
    servicer: Any
    service_name: str


class _MetricsInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    def __init__(self, service: str) -> None:
        self._service = service

    def intercept_service(self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, method = handler.unary_unary, details.method.rsplit("/", 1)[-1]

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            started = time.perf_counter()
            try:
                return inner(request, context)
            except Exception:
                RPC_ERRORS.labels(self._service, method).inc()
                raise
            finally:
                RPC_LATENCY.labels(self._service, method).observe(time.perf_counter() - started)

        return grpc.unary_unary_rpc_method_handler(
            call,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class RunningServer:
    """A started server, its bound port and its health servicer."""

    def __init__(self, server: grpc.Server, port: int, health_servicer: health.HealthServicer) -> None:
        self.server = server
        self.port = port
        self.health = health_servicer
        self._stopped = threading.Event()

    def stop(self, grace: float) -> None:
        """Refuse new calls, let in-flight ones finish within `grace` seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()

    def wait(self) -> None:
        self.server.wait_for_termination()


def start_server(
    settings: CommonSettings, registrations: Sequence[Registration], *, max_workers: int = 16
) -> RunningServer:
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=f"{settings.service_name}-rpc"),
        interceptors=[
            server_interceptor(),  # type: ignore[no-untyped-call]
            _MetricsInterceptor(settings.service_name),
            AuthInterceptor(settings.auth),
            # After authentication (no token, no work), before any servicer (nothing invalid is written).
            ValidationInterceptor(f"{settings.service_name}.memloop"),
        ],
        options=[("grpc.max_receive_message_length", 16 * 1024 * 1024)],
    )
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for reg in registrations:
        reg.add_to_server(reg.servicer, server)
    names = [reg.service_name for reg in registrations]
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    address = f"{settings.grpc_host}:{settings.grpc_port}"
    # MEMLOOP_TLS=on: only a TLS client with a certificate of the CA gets past the handshake;
    # there is no plaintext port beside it.
    if settings.tls is not None:
        port = server.add_secure_port(address, server_credentials(settings.tls))
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise SystemExit(f"{settings.service_name}: cannot bind {settings.grpc_host}:{settings.grpc_port}")
    server.start()
    for name in ["", *names]:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    _log.info(
        "%s serving on %s:%d (%s)",
        settings.service_name,
        settings.grpc_host,
        port,
        "mTLS" if settings.tls is not None else "plaintext",
    )
    return RunningServer(server, port, health_servicer)


def full_service_name(descriptor_module: Any, service: str) -> str:
    """`memloop.v1.MemoryService` from a generated *_pb2 module."""
    return str(descriptor_module.DESCRIPTOR.services_by_name[service].full_name)
