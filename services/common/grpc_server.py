"""Serve one or more gRPC services with the interceptors, health and reflection every service needs.

SIGTERM (or SIGINT) marks the process NOT_SERVING, stops accepting calls and lets in-flight calls
finish within the drain period before the process exits.
"""

from __future__ import annotations

import logging
import signal
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

from services.common import telemetry
from services.common.auth import AuthInterceptor
from services.common.settings import CommonSettings

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
        ],
        options=[("grpc.max_receive_message_length", 16 * 1024 * 1024)],
    )
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for reg in registrations:
        reg.add_to_server(reg.servicer, server)
    names = [reg.service_name for reg in registrations]
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    port = server.add_insecure_port(f"{settings.grpc_host}:{settings.grpc_port}")
    if port == 0:
        raise SystemExit(f"{settings.service_name}: cannot bind {settings.grpc_host}:{settings.grpc_port}")
    server.start()
    for name in ["", *names]:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    _log.info("%s serving on %s:%d", settings.service_name, settings.grpc_host, port)
    return RunningServer(server, port, health_servicer)


def serve_until_signalled(
    settings: CommonSettings,
    registrations: Sequence[Registration],
    *,
    on_stop: Callable[[], None] | None = None,
    max_workers: int = 16,
) -> None:
    """The main loop of a gRPC service process: serve, drain on SIGTERM, run `on_stop`, exit."""
    telemetry.configure(settings)
    running = start_server(settings, registrations, max_workers=max_workers)
    stop_requested = threading.Event()

    def request_stop(signum: int, _frame: object) -> None:
        _log.info("%s received signal %d: draining", settings.service_name, signum)
        stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    stop_requested.wait()
    running.stop(settings.drain_seconds)
    if on_stop is not None:
        on_stop()
    telemetry.shutdown()
    _log.info("%s stopped", settings.service_name)


def full_service_name(descriptor_module: Any, service: str) -> str:
    """`memloop.v1.MemoryService` from a generated *_pb2 module."""
    return str(descriptor_module.DESCRIPTOR.services_by_name[service].full_name)
