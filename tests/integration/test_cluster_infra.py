"""The clustered stack's infrastructure on its own: a 3-node JetStream cluster losing its stream leader,
the same cluster secured (users, client and route TLS), and a streaming standby whose lag bound
decides where memory's read-only RPCs go."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import nats
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
from services.common.tls import generate_local_pki
from services.memory.core.adapters.standby_reads import StandbyFreshness

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def _publish(urls: list[str], first: int, count: int, access: NatsAccess | None = None) -> list[bool]:
    """Publish messages `first`..`first+count-1` with their index as message id; the duplicate flags."""
    options = (access or NatsAccess()).connect_options()
    client = await nats.connect(urls, connect_timeout=2, max_reconnect_attempts=-1, reconnect_time_wait=0.2, **options)
    try:
        js = client.jetstream(timeout=10)
        await js.add_stream(name="R3", subjects=["r3.>"], num_replicas=3)
        flags = []
        for i in range(first, first + count):
            ack = await js.publish("r3.x", str(i).encode(), headers={Header.MSG_ID.value: f"m{i}"})
            flags.append(bool(ack.duplicate))
        return flags
    finally:
        await client.close()


async def _stored(urls: list[str], access: NatsAccess | None = None) -> int:
    client = await nats.connect(urls, connect_timeout=2, **(access or NatsAccess()).connect_options())
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
        assert asyncio.run(_publish(cluster.running_urls(), 5, 10)) == [True] * 5 + [False] * 5
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
        client = await nats.connect(urls, connect_timeout=2, allow_reconnect=False, **access.connect_options())
    except Exception as exc:
        return f"refused: {type(exc).__name__}"
    await client.close()
    return "connected"


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
        time.sleep(3.0)  # explicit routes are retried every second
        # Then: no node accepted it as a route, and the stream still has its three
        assert all("intruder" not in _routes(node) for node in cluster.nodes)
        assert asyncio.run(_stored(cluster.urls, admin)) == 3
    finally:
        if intruder is not None:
            intruder.stop()
        cluster.stop()


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
        # Then: within the bound, reads go back to the primary
        time.sleep(0.6)
        assert not freshness.fresh()
        primary_engine.dispose()
    finally:
        standby.stop()
        primary.stop()
