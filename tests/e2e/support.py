"""Helpers the end-to-end tests share: tokens, stubs, polling and reading the stream, all through
public interfaces (gRPC, NATS, the metrics endpoints)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Sequence
from typing import TypeVar

import grpc

from services.cli.fixtures import handle_request_from_fixture
from services.cli.stack import Stack
from services.common.gen.memloop.v1 import (
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel
from tests.fixtures import load_fixture
from tests.helpers import random_ref

T = TypeVar("T")
ALICE = load_fixture("alice.json")


def fresh_tenant() -> str:
    return random_ref("tenant").replace("-", "_")


def alice_request(name: str, tenant: str) -> serving_service_pb2.HandleRequestRequest:
    request = next(r for r in ALICE["requests"] if r["name"] == name)
    return handle_request_from_fixture(ALICE, request, tenant=tenant)


class Clients:
    """Serving and memory stubs for one tenant, closed by the test's teardown."""

    def __init__(self, stack: Stack, tenant: str, roles: tuple[str, ...] = ("reader", "writer", "reviewer")) -> None:
        token = stack.token(tenant, roles=roles)
        self._serving = sync_channel(stack.services["serving"].target, token)
        self._memory = sync_channel(stack.services["memory"].target, token)
        self.serving = serving_service_pb2_grpc.ServingServiceStub(self._serving)
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self._memory)
        self.tenant = tenant

    def close(self) -> None:
        self._serving.close()
        self._memory.close()

    def processed(self, event_id: str) -> bool:
        request = memory_service_pb2.GetProcessedEventRequest(tenant=self.tenant, event_id=event_id)
        return bool(self.memory.GetProcessedEvent(request, timeout=10).processed)

    def memories(
        self,
        user: str = "alice",
        *,
        source_event_id: str = "",
        states: Sequence[memory_service_pb2.MemoryState.ValueType] = (),
        intent_key: str = "",
    ) -> list[memory_service_pb2.Memory]:
        request = memory_service_pb2.ListMemoriesRequest(
            tenant=self.tenant,
            user=user,
            page_size=500,
            source_event_id=source_event_id,
            states=states,
            intent_key=intent_key,
        )
        return list(self.memory.ListMemories(request, timeout=10).memories)

    def audit(self, event_id: str) -> list[memory_service_pb2.AuditEvent]:
        request = memory_service_pb2.ListAuditEventsRequest(tenant=self.tenant, event_id=event_id, page_size=1000)
        return list(self.memory.ListAuditEvents(request, timeout=10).audit_events)


def eventually(probe: Callable[[], T | None], *, timeout: float = 60.0, interval: float = 0.2, what: str = "") -> T:
    """Poll until `probe` returns something truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = probe()
        except grpc.RpcError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(interval)


def _samples(port: int, name: str) -> list[tuple[str, float]]:
    """(sample line without its value, value) of every sample of `name` on a process's /metrics."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    found = []
    for line in body.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            labels, value = line.rsplit(" ", 1)
            found.append((labels, float(value)))
    return found


def metric(port: int, name: str) -> float | None:
    """The value of one unlabelled Prometheus metric from a process's /metrics endpoint."""
    found = _samples(port, name)
    return found[0][1] if found else None


def metric_sum(port: int, name: str, *, having: str = "") -> float:
    """The sum of `name`'s samples whose labels contain `having` (e.g. `trigger="scheduler"`); 0 when none."""
    return sum(value for labels, value in _samples(port, name) if having in labels)
