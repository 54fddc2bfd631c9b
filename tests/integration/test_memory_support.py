"""Helpers for the memory integration tests: memory replicas as processes, authed stubs, metrics.

Not fixtures (each test module declares its own small fixture over `MemoryCluster`), so the
modules stay independent. This module holds no tests.
"""

from __future__ import annotations

import functools
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from prometheus_client.parser import text_string_to_metric_families

from services.common.auth import bearer_metadata, issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.infra.processes import ServiceProcess, free_port
from services.common.vocabulary import MemoryType, candidate_key
from tests.helpers import SpawnService

SECRET = SigningKey.generate()  # the token issuer's key; memory gets only its public half
MODULE = "services.memory.entrypoints.main"


def token(tenant: str = "acme", roles: tuple[str, ...] = ("service",), subject: str = "tester") -> str:
    return issue_token(SECRET, subject=subject, tenant="*" if "service" in roles else tenant, roles=roles)


class Stub:
    """A MemoryService stub that sends a bearer token (and a deadline) with every call."""

    def __init__(self, port: int, bearer: str | None) -> None:
        self._channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self._stub = pb_grpc.MemoryServiceStub(self._channel)
        self._metadata = bearer_metadata(bearer) if bearer else ()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return functools.partial(getattr(self._stub, name), metadata=self._metadata, timeout=60)

    def close(self) -> None:
        self._channel.close()


@dataclass
class MemoryNode:
    name: str
    port: int
    metrics_port: int
    env: dict[str, str]
    process: ServiceProcess
    stubs: list[Stub] = field(default_factory=list)

    def stub(self, bearer: str | None = None, *, tenant: str = "acme", roles: tuple[str, ...] = ("service",)) -> Stub:
        stub = Stub(self.port, bearer if bearer is not None else token(tenant, roles))
        self.stubs.append(stub)
        return stub

    def metric(self, name: str, **labels: str) -> float:
        """The current value of one sample (0.0 when absent) from the process's /metrics endpoint."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10) as response:
            body = response.read().decode()
        for family in text_string_to_metric_families(body):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    return float(sample.value)
        return 0.0

    def log(self) -> str:
        return self.process.log_text()


class MemoryCluster:
    """Starts memory replicas of one database as processes, each with its own ports and index dir."""

    def __init__(self, spawn: SpawnService, *, database_url: str, nats_url: str, prefix: str, root: Path) -> None:
        self._spawn = spawn
        self.database_url = database_url
        self.nats_url = nats_url
        self.prefix = prefix
        self._root = root

    def start(self, name: str, *, embedder: str = "hashing", **extra: str) -> MemoryNode:
        port, metrics_port = free_port(), free_port()
        env = {
            "MEMLOOP_AUTH_PUBLIC_KEYS": SECRET.public_pem(),
            "MEMLOOP_GRPC_PORT": str(port),
            "MEMLOOP_METRICS_PORT": str(metrics_port),
            "MEMLOOP_MEMORY_DATABASE_URL": self.database_url,
            "MEMLOOP_NATS_URL": self.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.prefix,
            "MEMLOOP_REPLICA_ID": name,
            "MEMLOOP_MEMORY_INDEX_DIR": str(self._root / f"index-{name}"),
            "MEMLOOP_EMBEDDER": embedder,
            "MEMLOOP_INDEX_POLL_SECONDS": "1.0",
            **{k.upper(): v for k, v in extra.items()},
        }
        return MemoryNode(name, port, metrics_port, env, self._spawn(MODULE, env, port, name))

    def restart(self, node: MemoryNode) -> MemoryNode:
        """Stop gracefully (SIGTERM: drain, persist) and start again on the same ports and index dir."""
        for stub in node.stubs:
            stub.close()
        node.process.terminate()
        return MemoryNode(
            node.name, node.port, node.metrics_port, node.env, self._spawn(MODULE, node.env, node.port, node.name)
        )

    def index_dir(self, node: MemoryNode) -> Path:
        return Path(node.env["MEMLOOP_MEMORY_INDEX_DIR"])


def decision(
    text: str,
    *,
    intent: str = "",
    kind: MemoryType = MemoryType.PREFERENCE,
    outcome: int = cpb.DECISION_OUTCOME_STORE,
    origin: int = cpb.ORIGIN_OWNER,
    tenant: str = "acme",
    user: str = "alice",
    codes: tuple[str, ...] = (),
) -> cpb.Decision:
    """A decision as the worker would send it (candidate key from the shared vocabulary)."""
    kinds = {
        MemoryType.EPISODE: cpb.MEMORY_TYPE_EPISODE,
        MemoryType.PREFERENCE: cpb.MEMORY_TYPE_PREFERENCE,
        MemoryType.FACT: cpb.MEMORY_TYPE_FACT,
        MemoryType.PROCEDURAL: cpb.MEMORY_TYPE_PROCEDURAL,
    }
    return cpb.Decision(
        candidate=cpb.Candidate(
            candidate_key=candidate_key(tenant, user, kind, text),
            type=kinds[kind],
            origin=origin,  # type: ignore[arg-type]
            sensitivity=cpb.SENSITIVITY_NORMAL,
            confidence=0.95,
            intent_key=intent,
            text=text,
            version=1,
        ),
        outcome=outcome,  # type: ignore[arg-type]
        reasons=[cpb.DecisionReason(code=c, message=c.lower()) for c in codes],
        policy_version="policy-test-1",
    )


def apply_request(
    event_id: str, *decisions: cpb.Decision, tenant: str = "acme", user: str = "alice", trace_id: str = ""
) -> pb.ApplyLearningRequest:
    return pb.ApplyLearningRequest(
        event_id=event_id,
        trace_id=trace_id or (event_id.encode().hex() + "0" * 32)[:32],
        tenant=tenant,
        user=user,
        decisions=list(decisions),
    )


def wait_until(condition: Callable[[], bool], *, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()
