"""Helpers for the deletion tests: serving plus memory replicas as processes, and the evidence readers
that search every place a deleted text could survive (databases, indexes on disk, streams, logs).

Not fixtures and no tests here: `test_deletion.py` (integration) and `tests/e2e/test_deletion.py`
(the whole stack) build on them, so both search the same places the same way.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
from nats.js.errors import NotFoundError

from services.common.auth import bearer_metadata, issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.gen.memloop.v1 import serving_service_pb2_grpc as spb_grpc
from services.common.infra.processes import ServiceProcess, free_port
from services.common.nats_connect import connect_nats
from services.common.tls import TlsFiles, channel_credentials
from tests.helpers import POLICY_KEY_ENV, SpawnService

MEMORY = "services.memory.entrypoints.main"
SERVING = "services.serving.entrypoints.main"
STEP_DONE = pb.DELETION_STEP_STATE_DONE


class Stub:
    """A gRPC stub that sends a bearer token and a deadline with every call."""

    def __init__(
        self, target: str, bearer: str, stub_type: Callable[[grpc.Channel], Any], tls: TlsFiles | None = None
    ) -> None:
        """`tls`: a certificate of the stack's CA, for a stack running mTLS (the clustered one)."""
        self._channel = (
            grpc.insecure_channel(target) if tls is None else grpc.secure_channel(target, channel_credentials(tls))
        )
        self._stub = stub_type(self._channel)
        self._metadata = bearer_metadata(bearer)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return functools.partial(getattr(self._stub, name), metadata=self._metadata, timeout=60)

    def close(self) -> None:
        self._channel.close()


@dataclass
class Node:
    name: str
    port: int
    env: dict[str, str]
    process: ServiceProcess

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def index_dir(self) -> Path:
        return Path(self.env["MEMLOOP_MEMORY_INDEX_DIR"])


@dataclass
class DeletionRig:
    """Serving and memory replicas on fresh databases, one token issuer, one subject prefix."""

    spawn: SpawnService
    root: Path
    nats_url: str
    prefix: str
    serving_db: str
    memory_db: str
    secret: SigningKey = field(default_factory=SigningKey.generate)
    nodes: dict[str, Node] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    _stubs: list[Stub] = field(default_factory=list)

    @property
    def learning_stream(self) -> str:
        return f"{self.prefix}_LEARNING".upper()

    def token(
        self,
        tenant: str = "*",
        roles: tuple[str, ...] = ("service", "reader", "writer", "reviewer", "admin"),
        subject: str = "tester",
    ) -> str:
        return issue_token(self.secret, subject=subject, tenant=tenant, roles=roles)

    def port(self, name: str) -> int:
        return self.ports.setdefault(name, free_port())

    def env(self, name: str, **extra: str) -> dict[str, str]:
        return {
            "MEMLOOP_AUTH_PUBLIC_KEYS": self.secret.public_pem(),
            **POLICY_KEY_ENV,
            "MEMLOOP_SERVICE_TOKEN": self.token(roles=("service",), subject="memloop-loop"),
            "MEMLOOP_GRPC_PORT": str(self.port(name)),
            "MEMLOOP_METRICS_PORT": str(free_port()),
            "MEMLOOP_NATS_URL": self.nats_url,
            "MEMLOOP_SUBJECT_PREFIX": self.prefix,
            "MEMLOOP_LEARNING_STREAM": self.learning_stream,
            "MEMLOOP_SERVING_DATABASE_URL": self.serving_db,
            "MEMLOOP_MEMORY_DATABASE_URL": self.memory_db,
            "MEMLOOP_SERVING_TARGET": f"127.0.0.1:{self.port('serving')}",
            "MEMLOOP_REPLICA_ID": name,
            "MEMLOOP_MEMORY_INDEX_DIR": str(self.root / f"index-{name}"),
            "MEMLOOP_EMBEDDER": "hashing",
            "MEMLOOP_INDEX_POLL_SECONDS": "1.0",
            "MEMLOOP_INDEX_PERSIST_SECONDS": "1.0",
            "MEMLOOP_DELETION_POLL_SECONDS": "1.0",
            "MEMLOOP_REPLICA_HEARTBEAT_SECONDS": "1.0",
            "MEMLOOP_REPLICA_LIVENESS_SECONDS": "10.0",
            "MEMLOOP_DELETION_LEASE_SECONDS": "10.0",
            "MEMLOOP_DRAIN_SECONDS": "2",
            **extra,
        }

    def start(self, name: str, module: str, **extra: str) -> Node:
        env = self.env(name, **extra)
        port = int(env["MEMLOOP_GRPC_PORT"])
        node = Node(name, port, env, self.spawn(module, env, port, name))
        self.nodes[name] = node
        return node

    def restart(self, name: str, **extra: str) -> Node:
        """Stop (SIGTERM) if running, then start again on the same port, index dir and log file."""
        old = self.nodes[name]
        old.process.terminate()
        env = {**old.env, **extra}
        self.nodes[name] = Node(name, old.port, env, self.spawn(old.process.module, env, old.port, name))
        return self.nodes[name]

    def memory(self, name: str = "memory-a", bearer: str | None = None) -> Stub:
        stub = Stub(self.nodes[name].target, bearer or self.token(), pb_grpc.MemoryServiceStub)
        self._stubs.append(stub)
        return stub

    def serving(self, bearer: str | None = None) -> Stub:
        stub = Stub(self.nodes["serving"].target, bearer or self.token(), spb_grpc.ServingServiceStub)
        self._stubs.append(stub)
        return stub

    def close(self) -> None:
        for stub in self._stubs:
            stub.close()


def wait_until(condition: Callable[[], bool], *, timeout: float = 20.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except grpc.RpcError:
            pass  # a replica restarting
        time.sleep(interval)
    return condition()


def wait_complete(stub: Stub, tenant: str, deletion_id: str, timeout: float = 30.0) -> pb.Deletion:
    request = pb.GetDeletionRequest(tenant=tenant, deletion_id=deletion_id)
    done = lambda: bool(stub.GetDeletion(request).deletion.complete)  # noqa: E731
    assert wait_until(done, timeout=timeout), stub.GetDeletion(request)
    found: pb.Deletion = stub.GetDeletion(request).deletion
    return found


# --- evidence: where deleted text could survive ------------------------------------------------


def database_hits(url: str, needles: Iterable[str | bytes]) -> list[str]:
    """Every table and row (as JSON) of the database at `url` (an owner's URL) holding a needle.

    Each row is rendered whole with `row_to_json` (every text, jsonb, array column), and every
    bytea column is searched as raw bytes too (a serialized protobuf stores strings verbatim).
    """
    wanted = [n.encode() if isinstance(n, str) else n for n in needles]
    texts = [n.decode() for n in wanted if _is_text(n)]
    hits: list[str] = []
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT quote_ident(table_name) FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            ).fetchall()
        ]
        for table in tables:
            for (row,) in conn.execute(f"SELECT row_to_json(t)::text FROM {table} t").fetchall():
                hits += [f"{table}: {needle!r} in {row[:300]}" for needle in texts if needle in row]
            columns = conn.execute(
                "SELECT quote_ident(column_name) FROM information_schema.columns"
                " WHERE table_schema = 'public' AND table_name = %s AND data_type = 'bytea'",
                (table.strip('"'),),
            ).fetchall()
            for (column,) in columns:
                for (value,) in conn.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL").fetchall():
                    hits += [f"{table}.{column}: {needle!r}" for needle in wanted if needle in bytes(value)]
    return hits


def libpq_url(url: str) -> str:
    """SQLAlchemy's `postgresql+psycopg://` URL as psycopg itself takes it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _is_text(value: bytes) -> bool:
    try:
        value.decode()
    except UnicodeDecodeError:
        return False
    return True


def file_hits(paths: Iterable[Path], needles: Iterable[str | bytes]) -> list[str]:
    """Every file under `paths` (files or folders) holding one of the needles, as raw bytes."""
    wanted = [n.encode() if isinstance(n, str) else n for n in needles]
    hits: list[str] = []
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            data = file.read_bytes()
            hits += [f"{file}: {needle[:40]!r}" for needle in wanted if needle in data]
    return hits


def persisted_row_ids(index_dir: Path) -> set[int]:
    """The row ids the persisted index generation named by `manifest.json` holds (all tenants)."""
    manifest = json.loads((index_dir / "manifest.json").read_text())
    generation = index_dir / manifest["generation"]
    ids: set[int] = set()
    for stem in manifest["tenants"].values():
        # one partition per user; each lists the row ids of the vectors its index file holds
        partitions = json.loads((generation / f"{stem}.partitions.json").read_text())
        ids |= {int(row[0]) for entry in partitions.values() for row in entry["types"]}
    return ids


def stream_hits(nats_url: str, streams: Iterable[str], needles: Iterable[str]) -> list[str]:
    """Every message (payload or headers) of `streams` holding a needle; absent streams are empty."""
    return asyncio.run(_stream_hits(nats_url, list(streams), [n.encode() for n in needles]))


def stream_messages(nats_url: str, stream: str) -> list[tuple[int, dict[str, str], bytes]]:
    return asyncio.run(_messages(nats_url, stream))


async def _stream_hits(nats_url: str, streams: list[str], needles: list[bytes]) -> list[str]:
    hits: list[str] = []
    for stream in streams:
        for seq, headers, data in await _messages(nats_url, stream):
            blob = data + json.dumps(headers).encode()
            hits += [f"{stream} #{seq}: {needle!r}" for needle in needles if needle in blob]
    return hits


async def _messages(nats_url: str, stream: str) -> list[tuple[int, dict[str, str], bytes]]:
    client = await connect_nats(nats_url, connect_timeout=5, allow_reconnect=False)
    found: list[tuple[int, dict[str, str], bytes]] = []
    try:
        js = client.jetstream()
        sequence = 1
        while True:
            try:
                raw = await js.get_msg(stream, seq=sequence, subject=">", next=True)
            except NotFoundError:
                return found
            assert raw.seq is not None
            found.append((raw.seq, {str(k): str(v) for k, v in (raw.headers or {}).items()}, raw.data or b""))
            sequence = raw.seq + 1
    finally:
        await client.close()


def publish(nats_url: str, subject: str, payload: bytes, headers: dict[str, str]) -> int:
    async def send() -> int:
        client = await connect_nats(nats_url, connect_timeout=5, allow_reconnect=False)
        try:
            ack = await client.jetstream().publish(subject, payload, headers=headers, timeout=10)
            return int(ack.seq)
        finally:
            await client.close()

    return asyncio.run(send())


def vector_of(database_url: str, memory_id: str) -> bytes:
    """The stored embedding of a memory (read as the owner), to look for it in files later."""
    with psycopg.connect(libpq_url(database_url)) as conn:
        row = conn.execute("SELECT vector FROM memory_vectors WHERE memory_id = %s", (memory_id,)).fetchone()
    assert row is not None
    return bytes(row[0])


def row_id_of(database_url: str, memory_id: str) -> int:
    with psycopg.connect(libpq_url(database_url)) as conn:
        row = conn.execute("SELECT row_id FROM memories WHERE memory_id = %s", (memory_id,)).fetchone()
    assert row is not None
    return int(row[0])


def indexed_memory_ids(rig: DeletionRig, name: str) -> set[str]:
    """Memory ids behind the row ids replica `name`'s persisted index holds."""
    rows = persisted_row_ids(rig.nodes[name].index_dir)
    with psycopg.connect(libpq_url(rig.memory_db)) as conn:
        found = conn.execute("SELECT memory_id FROM memories WHERE row_id = ANY(%s)", (list(rows),)).fetchall()
    return {str(r[0]) for r in found}
