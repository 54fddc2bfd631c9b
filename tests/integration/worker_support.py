"""The learning loop minus the relay, as real processes, for the worker's integration tests.

Serving, memory, policy and the worker run as separate processes on fresh databases and a unique
stream; the test plays the relay: it takes the LearningEvent serving committed to its outbox
(`GetOutboxEvent`) and publishes it to JetStream itself, so it controls ids, duplicates and
timing. Everything the tests assert on is read back through public interfaces: memory's gRPC
API, the dead-letter stream, the `memloop dlq` command, and the processes' logs.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from services.cli.fixtures import handle_request_from_fixture
from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import (
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.infra.processes import ServiceProcess, free_port
from services.common.nats_connect import connect_nats
from services.worker.adapters.dead_letters import DeadLetter, DeadLetterQueue
from services.worker.adapters.jetstream import StreamNames
from tests.fixtures import load_fixture
from tests.helpers import POLICY_KEY_ENV, SpawnService, TestInfra, random_ref

FIXTURE = load_fixture("alice.json")
TENANT = FIXTURE["tenant"]
REQUESTS = {request["name"]: request for request in FIXTURE["requests"]}
SECRET_VALUES = ("+1 415 555 0134", "415 555 0134", "Tr0ub4dor&3")

WORKER_DEFAULTS = {
    "MEMLOOP_WORKER_ACK_WAIT_SECONDS": "4",
    "MEMLOOP_WORKER_MAX_DELIVER": "3",
    "MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS": "0.2",
    "MEMLOOP_WORKER_BACKOFF_MAX_SECONDS": "1",
    "MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS": "60",
    "MEMLOOP_WORKER_METRICS_POLL_SECONDS": "0.5",
    "MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS": "3",
}


@dataclass(frozen=True)
class Seeded:
    """A request serving handled: its event and the exact LearningEvent bytes it committed."""

    event_id: str
    user: str
    payload: bytes


@dataclass
class LoopRig:
    """Serving, memory, policy and worker processes sharing one token issuer, one stream, one prefix."""

    infra: TestInfra
    spawn: SpawnService
    streams: StreamNames
    serving_db: str
    memory_db: str
    secret: SigningKey = field(default_factory=SigningKey.generate)
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, ServiceProcess] = field(default_factory=dict)
    _channels: list[grpc.Channel] = field(default_factory=list)

    # --- processes ------------------------------------------------------------------------

    def env(self, name: str, **extra: str) -> dict[str, str]:
        port = self.ports.setdefault(name, free_port())
        return {
            "MEMLOOP_AUTH_PUBLIC_KEYS": self.secret.public_pem(),
            **POLICY_KEY_ENV,
            "MEMLOOP_SERVICE_TOKEN": self.token("*", ("service",)),
            "MEMLOOP_GRPC_PORT": str(port),
            "MEMLOOP_METRICS_PORT": str(self.ports.setdefault(f"{name}-metrics", free_port())),
            "MEMLOOP_NATS_URL": self.infra.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.streams.prefix,
            "MEMLOOP_LEARNING_STREAM": self.streams.learning_stream,
            "MEMLOOP_SERVING_DATABASE_URL": self.serving_db,
            "MEMLOOP_MEMORY_DATABASE_URL": self.memory_db,
            "MEMLOOP_EMBEDDER": "hashing",
            "MEMLOOP_MEMORY_INDEX_DIR": os.path.join(os.environ.get("TMPDIR", "/tmp"), random_ref("memloop-index")),
            "MEMLOOP_SERVING_TARGET": f"127.0.0.1:{self.ports.setdefault('serving', free_port())}",
            "MEMLOOP_POLICY_TARGET": f"127.0.0.1:{self.ports.setdefault('policy', free_port())}",
            "MEMLOOP_MEMORY_TARGET": f"127.0.0.1:{self.ports.setdefault('memory', free_port())}",
            "MEMLOOP_DRAIN_SECONDS": "3",
            **extra,
        }

    def start(self, name: str, module: str, **extra: str) -> ServiceProcess:
        process = self.spawn(module, self.env(name, **extra), self.ports[name], name)
        self.processes[name] = process
        return process

    def start_peers(self) -> None:
        self.start("policy", "services.policy.entrypoints.main")
        self.start("memory", "services.memory.entrypoints.main")
        self.start("serving", "services.serving.entrypoints.main")

    def start_worker(self, name: str = "worker", **extra: str) -> ServiceProcess:
        return self.start(name, "services.worker.entrypoints.main", **{**WORKER_DEFAULTS, **extra})

    def restart(self, name: str) -> None:
        process = self.processes[name]
        process.start()
        process.wait_healthy(self.ports[name], timeout=60.0)

    def logs(self) -> str:
        return "\n".join(process.log_text() for process in self.processes.values())

    # --- serving and the hand-played relay --------------------------------------------------

    def token(self, tenant: str = TENANT, roles: tuple[str, ...] = ("reader", "writer", "admin")) -> str:
        return issue_token(self.secret, subject=random_ref("test"), tenant=tenant, roles=roles)

    def _metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return (("authorization", f"Bearer {self.token('*', ('service', 'reader', 'writer'))}"),)

    def _channel(self, name: str) -> grpc.Channel:
        channel = grpc.insecure_channel(f"127.0.0.1:{self.ports[name]}")
        self._channels.append(channel)
        return channel

    def seed(self, name: str, *, user: str = "alice") -> Seeded:
        """Have serving handle one fixture request (as `user`); return the event it committed."""
        fixture = {**FIXTURE, "user": user}
        request = handle_request_from_fixture(
            fixture, REQUESTS[name], request_id=random_ref(REQUESTS[name]["request_id"])
        )
        serving = serving_service_pb2_grpc.ServingServiceStub(self._channel("serving"))
        handled = serving.HandleRequest(request, metadata=self._metadata(), timeout=15)
        outbox = serving.GetOutboxEvent(
            serving_service_pb2.GetOutboxEventRequest(tenant=TENANT, event_id=handled.event_id),
            metadata=self._metadata(),
            timeout=15,
        )
        return Seeded(event_id=handled.event_id, user=user, payload=outbox.event.SerializeToString())

    def publish(self, payload: bytes, msg_id: str, *, tenant: str = TENANT) -> None:
        asyncio.run(self._publish(payload, msg_id, self.streams.learning_subject(tenant)))

    async def _publish(self, payload: bytes, msg_id: str, subject: str) -> None:
        client = await connect_nats(self.infra.nats_url, connect_timeout=5, allow_reconnect=False)
        try:
            await client.jetstream().publish(subject, payload, headers={"Nats-Msg-Id": msg_id}, timeout=10)
        finally:
            await client.close()

    def dead_letters(self) -> list[DeadLetter]:
        async def read() -> list[DeadLetter]:
            client = await connect_nats(self.infra.nats_url, connect_timeout=5, allow_reconnect=False)
            try:
                return await DeadLetterQueue(client.jetstream(), self.streams).list()
            finally:
                await client.close()

        return asyncio.run(read())

    def memloop(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """Run the operator's `memloop` command (as `python -m services.cli.main`) against this stack."""
        env = {
            **os.environ,
            "MEMLOOP_NATS_URL": self.infra.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.streams.prefix,
            "MEMLOOP_LEARNING_STREAM": self.streams.learning_stream,
        }
        return subprocess.run(
            [sys.executable, "-m", "services.cli.main", *argv], env=env, capture_output=True, text=True, timeout=60
        )

    # --- memory, read through its API ----------------------------------------------------------

    def memory(self) -> memory_service_pb2_grpc.MemoryServiceStub:
        return memory_service_pb2_grpc.MemoryServiceStub(self._channel("memory"))

    def processed(self, event_id: str) -> bool:
        request = memory_service_pb2.GetProcessedEventRequest(tenant=TENANT, event_id=event_id)
        return bool(self.memory().GetProcessedEvent(request, metadata=self._metadata(), timeout=10).processed)

    def outcome(self, user: str) -> dict[str, Any]:
        """What memory holds for `user`, reduced to what must not depend on ids or timing."""
        stub, metadata = self.memory(), self._metadata()
        memories = stub.ListMemories(
            memory_service_pb2.ListMemoriesRequest(tenant=TENANT, user=user, page_size=500), metadata=metadata
        ).memories
        reviews = stub.ListReviewItems(
            memory_service_pb2.ListReviewItemsRequest(tenant=TENANT, user=user, page_size=500), metadata=metadata
        ).review_items
        return {
            "memories": sorted((m.type, m.state, m.text, m.origin, m.intent_key, m.policy_version) for m in memories),
            "reviews": sorted(
                (r.decision.outcome, r.decision.candidate.text, r.state, tuple(x.code for x in r.decision.reasons))
                for r in reviews
            ),
        }

    def audit_actions(self, event_id: str) -> list[str]:
        request = memory_service_pb2.ListAuditEventsRequest(tenant=TENANT, event_id=event_id, page_size=1000)
        events = self.memory().ListAuditEvents(request, metadata=self._metadata(), timeout=10).audit_events
        return sorted(event.action for event in events)

    def metrics(self, name: str = "worker") -> str:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[f'{name}-metrics']}/metrics", timeout=5) as page:
            return str(page.read().decode())

    def close(self) -> None:
        for channel in self._channels:
            channel.close()


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except grpc.RpcError:
            pass  # a peer restarting: keep polling
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.2)


def metric_value(page: str, name: str, default: float | None = 0.0) -> float:
    """A sample's value (or the sum of a labelled family) in a Prometheus page.

    A labelled sample appears only once it was first counted, so absence reads as `default`.
    """
    total, found = 0.0, False
    for line in page.splitlines():
        if line.startswith(name) and not line.startswith("#") and line[len(name)] in " {":
            total += float(line.rsplit(" ", 1)[1])
            found = True
    if not found:
        if default is None:
            raise AssertionError(f"metric {name} not exposed")
        return default
    return total


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture
def rig(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService
) -> Iterator[LoopRig]:
    """A fresh serving + memory + policy stack (no worker yet) on new databases and a unique stream."""
    loop = LoopRig(
        infra=infra,
        spawn=spawn,
        streams=StreamNames(prefix=nats_prefix, learning_stream=f"{nats_prefix}_LEARNING".upper()),
        serving_db=new_database("serving"),
        memory_db=new_database("memory"),
    )
    loop.start_peers()
    yield loop
    loop.close()
