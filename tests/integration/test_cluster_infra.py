"""The clustered stack's infrastructure on its own: a 3-node JetStream cluster losing its stream leader,
the same cluster secured (users, client and route TLS), and a streaming standby whose lag bound
decides where memory's read-only RPCs go."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
from nats.js.api import Header
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError

from services.common.infra.nats_auth import loop_users
from services.common.infra.nats_cluster import ClusterNode, NatsCluster
from services.common.infra.pg_standby import StreamingStandby
from services.common.infra.postgres import HOST, SUPERUSER, EmbeddedPostgres
from services.common.infra.processes import free_port
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.tls import generate_local_pki
from services.memory.core.adapters.standby_reads import StandbyFreshness

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def _publish(
    urls: list[str], first: int, count: int, access: NatsAccess | None = None, *, create: bool = True
) -> list[bool]:
    """Publish messages `first`..`first+count-1` with their index as message id; the duplicate flags.

    `create=False` publishes to the stream as it is: creating (even re-declaring) a stream is a
    request to the cluster's meta leader, which may still be being elected after a node is killed,
    while publishing needs only the stream's own leader, which is what the kill test is about.
    """
    options = (access or NatsAccess()).connect_options()
    client = await connect_nats(urls, connect_timeout=2, max_reconnect_attempts=-1, reconnect_time_wait=0.2, **options)
    try:
        js = client.jetstream(timeout=10)
        if create:
            await js.add_stream(name="R3", subjects=["r3.>"], num_replicas=3)
        flags = []
        for i in range(first, first + count):
            ack = await js.publish("r3.x", str(i).encode(), headers={Header.MSG_ID.value: f"m{i}"})
            flags.append(bool(ack.duplicate))
        return flags
    finally:
        await client.close()


async def _stored(urls: list[str], access: NatsAccess | None = None) -> int:
    client = await connect_nats(urls, connect_timeout=2, **(access or NatsAccess()).connect_options())
    try:
        return int((await client.jetstream(timeout=10).stream_info("R3")).state.messages)
    finally:
        await client.close()


def test_an_r3_stream_keeps_acknowledging_writes_after_its_leader_node_is_killed(tmp_path: Path) -> None:
    cluster = NatsCluster(tmp_path / "nats").start()
    try:
        # Given: an R3 stream holding 10 messages
        assert asyncio.run(_publish(cluster.urls, 0, 10)) == [False] * 10
        leader = cluster.stream_leader("R3")
        # When: its leader node is SIGKILLed, and nobody intervenes
        leader.kill()
        # Then: a new leader is elected and writes (and deduplication) go on through the survivors
        assert cluster.stream_leader("R3").name != leader.name
        assert asyncio.run(_publish(cluster.running_urls(), 5, 10, create=False)) == [True] * 5 + [False] * 5
        leader.restart()
        assert asyncio.run(_stored(cluster.urls)) == 15
        assert cluster.stream_replicas("R3")[2] == 3
    finally:
        cluster.stop()


def _routes(node: ClusterNode) -> set[str]:
    """The names of the servers `node` has a route to now (its `/routez`)."""
    with urllib.request.urlopen(f"{node.monitor_url}/routez", timeout=2) as answer:
        routez = json.loads(answer.read())
    return {str(route.get("remote_name", "")) for route in routez.get("routes") or []}


async def _refused(urls: list[str], access: NatsAccess) -> str:
    try:
        client = await connect_nats(urls, connect_timeout=2, allow_reconnect=False, **access.connect_options())
    except Exception as exc:
        return f"refused: {type(exc).__name__}"
    await client.close()
    return "connected"


def _wait_refused_by_every_node(intruder: ClusterNode, names: list[str], timeout: float = 30.0) -> None:
    """Until the intruder's log shows an authorization violation on its route to each named node."""
    deadline = time.monotonic() + timeout
    refused: set[str] = set()
    while refused != set(names):
        assert time.monotonic() < deadline, f"routes refused so far: {sorted(refused)}"
        lines = intruder.log_path.read_text(errors="replace").splitlines()
        errored = {line.split(" - ")[1] for line in lines if "Route Error 'Authorization Violation'" in line}
        refused = {
            line.rsplit("Remote: ", 1)[1].strip()
            for line in lines
            if "Remote: " in line and len(line.split(" - ")) > 2 and line.split(" - ")[1] in errored
        } & set(names)
        time.sleep(0.1)


def test_a_secured_cluster_replicates_over_route_tls_and_admits_no_node_without_the_route_secret(
    tmp_path: Path,
) -> None:
    # Given: the cluster as `memloop up --cluster` starts it: the loop's users, client and route TLS
    pki = generate_local_pki(tmp_path / "tls", ["nats", "operator", "relay"])
    users = loop_users("t", "R3")
    cluster = NatsCluster(tmp_path / "nats", users=users, tls=pki.files("nats"), client_tls=pki.files("operator"))
    intruder = None
    try:
        cluster.start()
        conf = cluster.nodes[0].config_path.read_text()
        assert conf.count("verify: true") == 2  # client port and routes: a peer must show a CA certificate
        admin = cluster.access("admin")
        # Then: an R3 stream forms (its replicas talk over the TLS routes) and takes writes
        assert asyncio.run(_publish(cluster.urls, 0, 3, admin)) == [False] * 3
        assert cluster.stream_replicas("R3")[2] == 3
        assert all(_routes(node) == {n.name for n in cluster.nodes} - {node.name} for node in cluster.nodes)
        # And: the client port wants both the CA's certificate and a user
        no_tls = NatsAccess(user="admin", password=users["admin"].password)
        assert asyncio.run(_refused(cluster.urls, no_tls)).startswith("refused")
        assert asyncio.run(_refused(cluster.urls, NatsAccess(tls=pki.files("operator")))).startswith("refused")
        # When: a server holding a certificate of the same CA (a service's) dials the routes without
        # the route user's password
        peers = [node.route_port for node in cluster.nodes]
        intruder = ClusterNode(
            "intruder",
            tmp_path / "intruder",
            route_port=free_port(),
            peers=peers,
            route_password="guessed",
            tls=pki.files("relay"),
        )
        intruder.start()
        # (waiting until each node has turned its route away, as the intruder's own log records)
        _wait_refused_by_every_node(intruder, [node.name for node in cluster.nodes])
        # Then: no node accepted it as a route, and the stream still has its three
        assert all("intruder" not in _routes(node) for node in cluster.nodes)
        assert asyncio.run(_stored(cluster.urls, admin)) == 3
    finally:
        if intruder is not None:
            intruder.stop()
        cluster.stop()


@pytest.mark.quiet  # the standby must be dropped within its 0.5 s lag bound, plus 1 s of slack
def test_reads_may_use_the_standby_only_while_it_is_within_the_lag_bound(tmp_path: Path) -> None:
    primary = EmbeddedPostgres(tmp_path / "pg", durable=False).start()
    standby = StreamingStandby(primary, tmp_path / "pg-standby")
    try:
        standby.start()
        primary_engine = create_engine(primary.url("postgres"))
        standby_engine = create_engine(standby.url("postgres"))
        freshness = StandbyFreshness(primary_engine, standby_engine, max_lag_seconds=0.5, sample_seconds=0.05)
        # Given: a commit on the primary
        with psycopg.connect(host=HOST, port=primary.port, user=SUPERUSER, dbname="postgres", autocommit=True) as c:
            c.execute("CREATE TABLE t (v int)")
            c.execute("INSERT INTO t VALUES (1)")
        assert not freshness.fresh()  # nothing sampled yet: the primary
        # When: the standby has replayed it and the sampler saw so
        standby.wait_caught_up()
        sampled_at = time.monotonic()
        freshness.sample_once()
        # Then: reads may go to the standby, which has the row, and it is still a standby
        assert freshness.fresh() and standby.is_in_recovery()
        with psycopg.connect(host=HOST, port=standby.port, user=SUPERUSER, dbname="postgres") as c:
            assert c.execute("SELECT count(*) FROM t").fetchone() == (1,)
        # When: the standby goes away
        standby.stop()
        standby_engine.dispose()
        with pytest.raises(OperationalError):
            freshness.sample_once()
        # Then: reads go back to the primary once the bound has passed since the last good sample
        while freshness.fresh():
            assert time.monotonic() - sampled_at < 5.0, "the standby stayed fresh long past its bound"
            time.sleep(0.01)
        assert time.monotonic() - sampled_at <= 0.5 + 1.0  # the bound, plus scheduling slack
        primary_engine.dispose()
    finally:
        standby.stop()
        primary.stop()
