"""`memloop up --cluster`: the clustered topology on one machine, and the fixture of its e2e test.

What it starts (issue 19):

- 3 nats-server nodes clustered on loopback; the learning stream and its dead-letter stream at R3
  (MEMLOOP_STREAM_REPLICAS=3, created by the relay and the worker), every node `sync_interval: always`;
- PostgreSQL as a primary plus a streaming hot standby (`pg_basebackup -R`); nothing promotes it;
- 2 relays, 2 workers, 2 memory replicas, 1 serving, 1 policy (and the console).

Secured as `memloop up --tls` is, by default: a local CA under the data folder and mTLS on every
gRPC server and channel (each replica presents its kind's certificate), and on every NATS node the
single embedded server's user per service with its permissions and client TLS, plus route TLS
between the nodes (`services/common/infra/nats_cluster.py`). `StackSpec(tls=False)` (`memloop up
--cluster --no-tls`) runs it in plaintext; the NATS users stay either way.

Every service gets every NATS node's URL (MEMLOOP_NATS_URL, comma-separated). Each memory replica
is two processes (issue 15): retrieval (`memory`, `memory-1`) and ingestion (`memory-ingest`,
`memory-1-ingest`, idle priority); workers call both ingestion processes through one round_robin
target, every other client both retrieval processes through another. Memory replicas read GetMemory, ListMemories,
GetLineage and SearchMemories' rows from the standby while it is within
MEMLOOP_MEMORY_STANDBY_MAX_LAG_SECONDS of the primary (services/memory/core/adapters/standby_reads.py).

How the replicas of each kind share work without coordination: relays claim outbox rows with
`FOR UPDATE SKIP LOCKED` and a lease, and publish with the event id as JetStream's `Nats-Msg-Id`,
so a row published twice (a relay killed between PubAck and mark) is dropped by the stream's
duplicate window; workers pull from one durable consumer, each message delivered to one of them;
memory's ApplyLearning records the event id in the same transaction as its effect, so a
redelivery is answered from that record; memory replicas each keep their own FAISS indexes,
fed by the database's change feed.
"""

from __future__ import annotations

import dataclasses

from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.grpc_client import replicas_target
from services.common.infra.nats_cluster import NatsCluster
from services.common.infra.pg_standby import StreamingStandby
from services.common.infra.postgres import HOST
from services.common.nats_urls import nats_servers

STREAM_REPLICAS = 3


@dataclasses.dataclass(frozen=True)
class ClusterShape:
    """How many of each: the defaults are issue 19's topology."""

    nats_nodes: int = 3
    relays: int = 2
    workers: int = 2
    memory_replicas: int = 2
    standby: bool = True
    standby_max_lag_seconds: float = 1.0


def replica_names(kind: str, count: int) -> list[str]:
    """`memory`, `memory-1`, ...: the first keeps the plain name, so single-stack tools still find it."""
    return [kind if i == 0 else f"{kind}-{i}" for i in range(count)]


class ClusterStack(Stack):
    """A `Stack` whose infrastructure is a NATS cluster and a PostgreSQL primary with a standby."""

    DEFAULT_TLS = True  # issue 19: `--cluster` generates a local CA and turns TLS on

    def __init__(self, spec: StackSpec, shape: ClusterShape | None = None) -> None:
        self.shape = shape or ClusterShape()
        super().__init__(dataclasses.replace(spec, memory_replicas=self.shape.memory_replicas))
        self.nats_cluster: NatsCluster | None = None
        self.standby: StreamingStandby | None = None

    def start(self) -> ClusterStack:
        try:
            self._start_infra()
            # One after another, not `start_together`: two workers creating the replicated streams
            # at once on a fresh 3-node JetStream raced ("stream name already in use with a
            # different configuration") and the start failed (seen once in a clean-clone CI).
            self._add_services()
            if self.spec.console:
                self.start_console()
        except BaseException:
            self.stop()
            raise
        return self

    def _add_services(self) -> None:
        self.add_service("policy", "policy")
        for name in self.memory_names():
            self.add_memory_replica(name)
        self.add_serving()
        for name in replica_names("relay", self.shape.relays):
            self.add_service(name, "relay")
        for name in replica_names("worker", self.shape.workers):
            self.add_service(name, "worker")

    def _start_nats(self) -> str:
        """The cluster in place of the single server, with the same users and certificate."""
        self.nats_cluster = NatsCluster(
            self.spec.data_dir / "nats",
            size=self.shape.nats_nodes,
            users=self.nats_users,
            tls=self.tls_files("nats"),
            client_tls=self.tls_files("operator"),
        )
        self.nats_cluster.start()
        return self.nats_cluster.url

    def _start_infra(self) -> None:
        super()._start_infra()
        primary = self.embedded_postgres
        if self.shape.standby and primary is not None:
            self.standby = StreamingStandby(primary, self.spec.data_dir / "postgres-standby").start()

    @property
    def standby_memory_url(self) -> str:
        """The memory database's URL on the standby ('' without one)."""
        if self.standby is None or self.embedded_postgres is None:
            return ""
        return self.memory_db_url.replace(f"@{HOST}:{self.embedded_postgres.port}/", f"@{HOST}:{self.standby.port}/", 1)

    def base_env(self) -> dict[str, str]:
        env = super().base_env()
        # R3 needs three servers; an external single server keeps R1
        env["MEMLOOP_STREAM_REPLICAS"] = str(STREAM_REPLICAS if len(nats_servers(self.nats_url)) >= 3 else 1)
        memory = [f"127.0.0.1:{self._grpc_port(n)}" for n in replica_names("memory", self.shape.memory_replicas)]
        env["MEMLOOP_MEMORY_TARGET"] = replicas_target(memory)
        env.update(self.spec.extra_env)
        return env

    def _kind_env(self, kind: str) -> dict[str, str]:
        env = super()._kind_env(kind)
        if kind == "memory" and self.standby_memory_url:
            env["MEMLOOP_MEMORY_STANDBY_DATABASE_URL"] = self.standby_memory_url
            env["MEMLOOP_MEMORY_STANDBY_MAX_LAG_SECONDS"] = str(self.shape.standby_max_lag_seconds)
        return env

    def stop(self) -> None:
        super().stop()
        if self.standby is not None:
            self.standby.stop()
        if self.nats_cluster is not None:
            self.nats_cluster.stop()

    def describe(self) -> list[str]:
        lines = super().describe()
        if self.nats_cluster is not None:
            nodes = ", ".join(f"{node.name}={node.url}" for node in self.nats_cluster.nodes)
            secured = f"; users: {', '.join(self.nats_users)}" if self.nats_users else ""
            secured += "; client and route TLS" if self.pki is not None else ""
            lines[1] = f"nats      embedded cluster of {len(self.nats_cluster.nodes)}: {nodes} (streams at R3{secured})"
        if self.standby is not None:
            lines.insert(1, f"postgres  standby (hot, streaming) 127.0.0.1:{self.standby.port}")
        return lines
