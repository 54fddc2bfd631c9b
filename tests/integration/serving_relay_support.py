"""Shared by the serving and relay integration tests: the Alice fixture as requests, a stack of real
service processes (serving, relays) on a fresh database and a unique stream, and read-only views of
what they wrote (PostgreSQL rows as the owner sees them, JetStream messages via nats-py).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from nats.js.errors import NotFoundError

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2, serving_service_pb2_grpc
from services.common.infra.processes import ServiceProcess, free_port
from services.common.nats_connect import connect_nats
from services.relay.bootstrap import libpq_url
from tests.fixtures import fixture_path
from tests.helpers import SpawnService, TestInfra, random_ref

FIXTURE = fixture_path("alice.json")
SERVING = "services.serving.entrypoints.main"
RELAY = "services.relay.entrypoints.main"


def alice() -> dict[str, Any]:
    return dict(json.loads(FIXTURE.read_text()))


def alice_request(index: int = 0, *, request_id: str | None = None) -> serving_service_pb2.HandleRequestRequest:
    """One of the fixture's requests as a client sends it; a fresh request id unless one is given."""
    data = alice()
    case = data["requests"][index]
    content = case["content"]
    return serving_service_pb2.HandleRequestRequest(
        request_id=request_id or random_ref(case["request_id"]),
        tenant=data["tenant"],
        user=data["user"],
        thread=case["thread"],
        route=case["route"],
        procedure_versions=case["procedure_versions"],
        tool_outcomes=[learning_event_pb2.ToolOutcome(**o) for o in case["tool_outcomes"]],
        content=serving_service_pb2.EmailContent(
            from_address=content["from"], to_address=content["to"], subject=content["subject"], body=content["body"]
        ),
        reply=case["reply"],
        owner_address=data["owner_address"],
        sender_authentication=learning_event_pb2.SenderAuthentication(
            authentication_results=case.get("authentication_results", "")
        ),
    )


class _Bearer(grpc.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    """Adds the bearer token. (services.common.grpc_client.sync_channel cannot be used as it stands:
    it passes OpenTelemetry's interceptor to grpc.intercept_channel, which rejects it.)"""

    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(details._replace(metadata=[*(details.metadata or ()), *self._metadata]), request)


@dataclass
class Stack:
    """Serving (and relays on demand) as real processes, sharing one database and one stream."""

    admin_db_url: str
    nats_url: str
    stream: str
    prefix: str
    secret: SigningKey
    serving_port: int
    span_file: Path
    _spawn: SpawnService
    _channels: list[grpc.Channel] = field(default_factory=list)

    def env(self, port: int, **extra: str) -> dict[str, str]:
        return {
            "MEMLOOP_AUTH_PUBLIC_KEYS": self.secret.public_pem(),
            "MEMLOOP_GRPC_PORT": str(port),
            "MEMLOOP_METRICS_PORT": str(free_port()),
            "MEMLOOP_SERVING_DATABASE_URL": self.admin_db_url,
            "MEMLOOP_NATS_URL": self.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.prefix,
            "MEMLOOP_LEARNING_STREAM": self.stream,
            "MEMLOOP_RELAY_POLL_SECONDS": "1",
            "MEMLOOP_SPAN_FILE": str(self.span_file),
            **extra,
        }

    def start_relay(self, name: str = "relay", **extra_env: str) -> ServiceProcess:
        port = free_port()
        return self._spawn(RELAY, self.env(port, **extra_env), port, name)

    def token(self, tenant: str = "acme", roles: tuple[str, ...] = ("writer", "reader", "admin", "service")) -> str:
        return issue_token(self.secret, subject=random_ref("client"), tenant=tenant, roles=roles)

    def stub(self, token: str | None = None) -> serving_service_pb2_grpc.ServingServiceStub:
        target = f"127.0.0.1:{self.serving_port}"
        channel = grpc.insecure_channel(target)
        if token is not None:
            channel = grpc.intercept_channel(channel, _Bearer(token))
        self._channels.append(channel)
        return serving_service_pb2_grpc.ServingServiceStub(channel)

    def close(self) -> None:
        for channel in self._channels:
            channel.close()

    # --- what the services wrote --------------------------------------------------------------

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        """Run SQL as the database owner (RLS does not bind the owner's superuser)."""
        with psycopg.connect(libpq_url(self.admin_db_url), autocommit=True) as conn:
            return list(conn.execute(sql, params).fetchall())

    def count(self, table: str, request_id: str) -> int:
        return int(self.query(f"SELECT count(*) FROM {table} WHERE request_id = %s", request_id)[0][0])

    def unpublished(self) -> int:
        return int(self.query("SELECT count(*) FROM outbox WHERE published_at IS NULL")[0][0])

    def wait_all_published(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.unpublished() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert self.unpublished() == 0, f"{self.unpublished()} outbox rows still unpublished after {timeout}s"

    def spans(self) -> list[dict[str, Any]]:
        """Every span the stack's processes exported so far (JSON lines, shared file)."""
        if not self.span_file.exists():
            return []
        return [json.loads(line) for line in self.span_file.read_text().splitlines() if line.strip()]

    def stream_messages(self) -> list[StreamMessage]:
        return read_stream(self.nats_url, self.stream)


@dataclass(frozen=True)
class StreamMessage:
    seq: int
    subject: str
    headers: dict[str, str]
    data: bytes

    @property
    def msg_id(self) -> str:
        return self.headers.get("Nats-Msg-Id", "")


def read_stream(nats_url: str, stream: str) -> list[StreamMessage]:
    """Every message in the stream, by sequence (an absent stream reads as empty)."""

    async def read() -> list[StreamMessage]:
        client = await connect_nats(nats_url, connect_timeout=5, allow_reconnect=False)
        try:
            js = client.jetstream()
            try:
                info = await js.stream_info(stream)
            except NotFoundError:
                return []
            found = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1) if info.state.messages else []:
                msg = await js.get_msg(stream, seq)
                found.append(StreamMessage(seq, msg.subject or "", dict(msg.headers or {}), msg.data or b""))
            return found
        finally:
            await client.close()

    return asyncio.run(read())


def stream_consumers(nats_url: str, stream: str) -> int:
    async def read() -> int:
        client = await connect_nats(nats_url, connect_timeout=5, allow_reconnect=False)
        try:
            return int((await client.jetstream().stream_info(stream)).state.consumer_count)
        finally:
            await client.close()

    return asyncio.run(read())


def make_stack_factory(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> Iterator[Callable[..., Stack]]:
    stacks: list[Stack] = []

    def make(nats_url: str | None = None, **serving_env: str) -> Stack:
        port = free_port()
        stack = Stack(
            admin_db_url=new_database("serving"),
            nats_url=nats_url or infra.nats_url,
            stream=f"{nats_prefix}_LEARNING".upper(),
            prefix=nats_prefix,
            secret=SigningKey.generate(),
            serving_port=port,
            span_file=tmp_path / f"spans-{len(stacks)}.jsonl",
            _spawn=spawn,
        )
        spawn(SERVING, stack.env(port, **serving_env), port, "serving")
        stacks.append(stack)
        return stack

    yield make
    for stack in stacks:
        stack.close()


@pytest.fixture
def make_stack(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> Iterator[Callable[..., Stack]]:
    """Factory: a serving process on a fresh database; relays are started by the test."""
    yield from make_stack_factory(infra, new_database, nats_prefix, spawn, tmp_path)


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack()


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)
