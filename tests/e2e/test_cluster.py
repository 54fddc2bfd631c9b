"""The clustered topology under load (issue 19): `memloop up --cluster` as processes, nodes killed.

One module-scoped run: 3 NATS nodes (streams at R3), PostgreSQL primary + hot standby, 2 relays,
2 workers, 2 memory replicas, serving, policy, secured as `memloop up --cluster` secures them (a
local CA, mTLS on every gRPC port, a NATS user per service on every node, client and route TLS).
Clients send statements (the chaos campaign's senders, with its retries and resends) while, in
order: the learning stream's leader node is SIGKILLed (and later restarted), then a follower node;
one relay, one worker and one memory replica are SIGKILLed and stay dead. Nothing is promoted by
hand. Then the tests check what must hold.

After the run, the doors the security design closes are tried on the cluster as
tests/e2e/test_security.py tries them on one of each: a plaintext gRPC client, a NATS client
without the relay's credentials publishing a learning event.

Size: MEMLOOP_CLUSTER_EVENTS (400 in `make test`; `make cluster-test` sends 2,000). Run alone
with `pytest -m cluster`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2

from services.cli.cluster import ClusterShape, ClusterStack
from services.cli.stack_spec import StackSpec
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.gen.memloop.v1.serving_service_pb2_grpc import ServingServiceStub
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import one_shot_options
from services.common.tls import channel_credentials
from tests.chaos.campaign import FAST, TENANT, Campaign, Profile, Report, Statement
from tests.e2e.security_support import (
    forge_learning_event,
    health,
    learning_subject,
    operator_tls,
    refused,
    subject_count,
    violation,
)
from tests.e2e.support import eventually, metric
from tests.integration.deletion_support import Stub, libpq_url, persisted_row_ids

# quiet: its retrieval bound is wall-clock time, under a load the run makes itself.
pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.quiet, pytest.mark.timeout(1800)]

EVENTS = int(os.environ.get("MEMLOOP_CLUSTER_EVENTS", "400"))
STANDBY_MAX_LAG = 1.0
INDEX_POLL = float(FAST["MEMLOOP_INDEX_POLL_SECONDS"])
# The stated bound of SearchMemories on a replica (README, "Clustered mode"): the standby's lag bound
# plus one index poll; the slack covers this test's own polling and a catch-up pass on 2 busy cores.
RETRIEVAL_BOUND = STANDBY_MAX_LAG + INDEX_POLL
SLACK = 2.0
KILLED = ("relay-1", "worker-1", "memory-1")


@dataclass
class ClusterRun:
    campaign: ClusterCampaign
    stack: ClusterStack
    report: Report
    committed: set[str]
    faults: list[str] = field(default_factory=list)
    leader_before: str = ""
    leader_after: str = ""
    stream_messages: int = 0
    stream_event_ids: int = 0
    forget_event: str = ""
    forget_row_id: int = 0
    forget_memory_id: str = ""


class ClusterCampaign(Campaign):
    """The chaos campaign's clients, settling and checks, on the clustered stack with issue 19's kills."""

    def __init__(self, data_dir: Path, profile: Profile) -> None:
        super().__init__(data_dir, profile, seed=19)
        env = {**FAST, "MEMLOOP_INDEX_PERSIST_SECONDS": "1", "MEMLOOP_REPLICA_LIVENESS_SECONDS": "10"}
        spec = StackSpec(data_dir=data_dir, embedder="hashing", console=False, extra_env=env)
        self.cluster = ClusterStack(spec, ClusterShape(standby_max_lag_seconds=STANDBY_MAX_LAG))
        self.stack = self.cluster
        self.dead: set[str] = set()
        self.fault_log: list[str] = []
        self.leaders: list[str] = []
        self.forget_probe: tuple[str, int, str] = ("", 0, "")

    def _revive_the_dead(self) -> None:
        """The campaign restarts anything not running; the processes this test killed stay dead."""
        with self._faulting:
            for name, handle in self.stack.services.items():
                if name not in self.dead and not handle.process.is_running:
                    self.report.unexpected_exits[name] += 1
                    self.stack.restart(name)

    def _inject_faults(self) -> None:
        cluster = self.cluster.nats_cluster
        assert cluster is not None
        stream = self.stack.spec.learning_stream
        self._wait_processed(self.profile.events // 10)
        leader = cluster.stream_leader(stream)
        leader.kill()
        self.fault_log.append(f"nats leader {leader.name} killed")
        self.report.faults["nats leader"] += 1
        self.leaders += [leader.name, cluster.stream_leader(stream).name]
        self._wait_processed(self.profile.events // 4)
        leader.restart()
        cluster.wait_replica_current(stream, leader.name)
        _, followers, _ = cluster.stream_replicas(stream)
        # a follower other than the node just restarted, when there is one
        follower = cluster.node(next((f for f in followers if f != leader.name), followers[0]))
        follower.kill()
        self.fault_log.append(f"nats follower {follower.name} killed")
        self.report.faults["nats follower"] += 1
        self._wait_processed(self.profile.events * 2 // 5)
        follower.restart()
        self._kill("relay-1")
        self._kill("worker-1")
        self._wait_processed(self.profile.events // 2)
        self._kill("memory-1")

    def _kill(self, name: str) -> None:
        with self._faulting:
            self.dead.add(name)
            self.stack.services[name].process.kill()
        self.fault_log.append(f"{name} killed")
        self.report.faults[name.split("-")[0]] += 1

    def _wait_processed(self, count: int, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self._processed_ids()) < count and time.monotonic() < deadline:
            time.sleep(0.5)

    def run_and_keep(self) -> None:
        """The campaign's run, without stopping the stack at the end (the tests still need it)."""
        started = time.monotonic()
        self.stack.start()
        self.forget_probe = _learn_one_to_forget(self)
        self._sending.set()
        faults = threading.Thread(target=self._inject_faults, name="cluster-faults", daemon=True)
        faults.start()
        senders = [threading.Thread(target=self._send_all, args=(c,)) for c in range(self.profile.clients)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        self._sending.clear()
        faults.join()
        self._settle_and_replay()
        self._check()
        self.report.seconds = time.monotonic() - started


def _learn_one_to_forget(campaign: ClusterCampaign) -> tuple[str, int, str]:
    """One statement learned by both replicas (on disk too) before any fault: (event id, row id, memory id)."""
    stack = campaign.stack
    stub = Stub(stack.services["serving"].target, campaign._token(), ServingServiceStub, stack.tls_files("operator"))
    try:
        statement = Statement("forget-me", "Please keep my meetings after 10:30 - forget-me marker.", "forget-me-1")
        answer = campaign._send(stub, statement)
    finally:
        stub.close()
    eventually(lambda: answer.event_id in campaign._processed_ids(), timeout=120, what="the statement was learned")
    with campaign._memory_db() as conn:
        row = conn.execute(
            "SELECT row_id, memory_id FROM memories WHERE event_id = %s AND status = 'active'",
            (answer.event_id,),
        ).fetchone()
    assert row is not None
    for replica in ("memory", "memory-1"):
        index_dir = Path(campaign.stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
        eventually(partial(_holds, index_dir, int(row[0])), what=f"{replica} persisted it")
    return answer.event_id, int(row[0]), str(row[1])


def _holds(index_dir: Path, row_id: int) -> bool:
    return row_id in persisted_row_ids(index_dir)


async def _stream_event_ids(stack: ClusterStack) -> tuple[int, set[str]]:
    """(messages in the learning stream, distinct event ids among them)."""
    access = stack.nats_access("admin").connect_options()
    client = await connect_nats(**one_shot_options(stack.nats_server_url), **access, connect_timeout=5)
    stream = stack.spec.learning_stream
    try:
        js = client.jetstream(timeout=10)
        info = await js.stream_info(stream)
        ids: set[str] = set()
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            message = await js.get_msg(stream, seq)
            ids.add((message.headers or {}).get("Nats-Msg-Id", ""))
        return int(info.state.messages), ids
    finally:
        await client.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterRun]:
    profile = Profile(events=EVENTS, users=max(10, EVENTS // 50), clients=4, fault_gap=(0.0, 0.0))
    campaign = ClusterCampaign(tmp_path_factory.mktemp("cluster") / "stack", profile)
    try:
        campaign.run_and_keep()
        stack = campaign.cluster
        messages, ids = asyncio.run(_stream_event_ids(stack))
        event, row_id, memory_id = campaign.forget_probe
        # the load's events and the one learned first to be forgotten later
        committed = {s.event_id for s in campaign.statements} | {event}
        print(f"\ncluster run: {campaign.report.table()}\nfaults: {campaign.fault_log}")
        yield ClusterRun(
            campaign,
            stack,
            campaign.report,
            committed,
            faults=campaign.fault_log,
            leader_before=campaign.leaders[0],
            leader_after=campaign.leaders[1],
            stream_messages=messages,
            stream_event_ids=len(ids & committed),
            forget_event=event,
            forget_row_id=row_id,
            forget_memory_id=memory_id,
        )
    finally:
        campaign.stack.stop()


def test_the_streams_are_r3_and_the_killed_leader_was_replaced_without_help(run: ClusterRun) -> None:
    cluster = run.stack.nats_cluster
    assert cluster is not None
    for stream in (run.stack.spec.learning_stream, f"{run.stack.spec.learning_stream}_DLQ"):
        assert cluster.stream_replicas(stream)[2] == 3, stream
    assert run.leader_after and run.leader_after != run.leader_before
    assert run.faults[0] == f"nats leader {run.leader_before} killed"
    assert run.faults[1].startswith("nats follower") and run.faults[2:] == [f"{n} killed" for n in KILLED]


def test_every_committed_event_is_processed_exactly_once(run: ClusterRun) -> None:
    report = run.report
    assert report.committed == EVENTS  # every send was answered (retried through the faults)
    assert report.missing == 0 and report.processed == report.committed
    assert report.double_applied == 0  # no event applied twice, across two workers and two replicas
    assert report.outbox_unpublished == 0
    assert (report.consumer_pending, report.consumer_ack_pending) == (0, 0)
    assert report.resend_mismatches == 0


def test_no_duplicates_anywhere(run: ClusterRun) -> None:
    report = run.report
    assert report.duplicate_memories == 0 and report.multiple_active == 0
    # two relays, one killed mid-claim: each event is in the stream once (dead-letter replays aside)
    assert run.stream_event_ids == len(run.committed)
    assert run.stream_messages - len(run.committed) <= report.replayed


def test_killed_processes_stayed_dead_and_nothing_else_died(run: ClusterRun) -> None:
    for name in KILLED:
        assert not run.stack.services[name].process.is_running, name
    assert not run.report.unexpected_exits
    assert run.stack.standby is not None and run.stack.standby.is_in_recovery()  # nothing was promoted


def test_retrieval_on_the_surviving_replica_is_current_within_its_bound(run: ClusterRun) -> None:
    # Given: the surviving replica: its search confirms hits on the primary, its listings read the standby
    stack = run.stack
    tls = stack.tls_files("operator")
    stub = Stub(stack.services["memory"].target, stack.token(TENANT, ("reader",)), pb_grpc.MemoryServiceStub, tls)
    serving = Stub(stack.services["serving"].target, stack.token(TENANT, ("writer", "reader")), ServingServiceStub, tls)
    campaign_send = ClusterCampaign._send
    delays, listing_delays = [], []
    try:
        for i in range(10):
            user, text = f"fresh-{i}", f"Please keep my meetings after 09:30 - marker fresh{i}x{time.time_ns()}."
            # When: a new statement is learned (its processed record is on the primary)
            answer = campaign_send(run.campaign, serving, Statement(user, text, f"fresh-{i}-{time.time_ns()}"))
            with psycopg.connect(libpq_url(stack.memory_db_url), autocommit=True) as conn:
                eventually(partial(_processed, conn, answer.event_id), interval=0.02, what="processed")
            learned_at = time.monotonic()

            def found(user: str = user, text: str = text) -> bool:
                request = pb.SearchMemoriesRequest(tenant=TENANT, user=user, query=text, k=5)
                return any(text in h.memory.text for h in stub.SearchMemories(request, timeout=10).results)

            def listed(user: str = user, text: str = text) -> bool:
                page = stub.ListMemories(pb.ListMemoriesRequest(tenant=TENANT, user=user), timeout=10)
                return any(text in m.text for m in page.memories)

            eventually(listed, timeout=STANDBY_MAX_LAG + SLACK + 30, interval=0.05, what="listed")
            listing_delays.append(time.monotonic() - learned_at)
            eventually(found, timeout=RETRIEVAL_BOUND + SLACK + 30, interval=0.05, what="retrievable")
            delays.append(time.monotonic() - learned_at)
    finally:
        stub.close()
        serving.close()
    # Then: each was retrievable, and listed, within its stated bound, and the standby did serve reads
    print(f"\nretrieval delays after commit, s: max {max(delays):.2f}, all {[round(d, 2) for d in delays]}")
    print(f"listing delays after commit, s: max {max(listing_delays):.2f}")
    assert max(delays) <= RETRIEVAL_BOUND + SLACK
    assert max(listing_delays) <= STANDBY_MAX_LAG + SLACK
    assert (
        metric(stack.services["memory"].metrics_port, 'memloop_memory_read_source_total{source="standby"}') or 0
    ) > 0


def test_a_forget_reaches_the_live_replica_and_the_dead_one_once_restarted(run: ClusterRun) -> None:
    stack = run.stack
    admin = Stub(
        stack.services["memory"].target,
        stack.token(TENANT, ("reader", "writer", "admin", "service")),
        pb_grpc.MemoryServiceStub,
        stack.tls_files("operator"),
    )
    try:
        # Given: a memory both replicas held on disk before memory-1 was killed; memory-1 is still dead
        assert _searchable(stack, "memory", run.forget_memory_id)
        # When: it is forgotten
        ack = admin.Forget(pb.ForgetRequest(tenant=TENANT, event_id=run.forget_event), timeout=60)
        # Then: the live replica no longer returns it
        eventually(lambda: not _searchable(stack, "memory", run.forget_memory_id), timeout=30, what="live forgot")
        live_dir = Path(stack.services["memory"].env["MEMLOOP_MEMORY_INDEX_DIR"])
        eventually(lambda: run.forget_row_id not in persisted_row_ids(live_dir), what="live index file")
        dead_dir = Path(stack.services["memory-1"].env["MEMLOOP_MEMORY_INDEX_DIR"])
        assert run.forget_row_id in persisted_row_ids(dead_dir)  # the dead replica's files still hold it
        # When: the dead replica is restarted
        stack.restart("memory-1")
        # Then: it does not return it either, its index files drop it, and the deletion records it done
        assert not _searchable(stack, "memory-1", run.forget_memory_id)
        eventually(lambda: run.forget_row_id not in persisted_row_ids(dead_dir), what="restarted index file")

        def finished() -> pb.Deletion | None:
            request = pb.GetDeletionRequest(tenant=TENANT, deletion_id=ack.deletion_id)
            deletion: pb.Deletion = admin.GetDeletion(request, timeout=10).deletion
            return deletion if deletion.complete else None

        # the deletion completed without waiting for the dead replica (dead past its liveness when it
        # was acknowledged, it had no step: it applies the change feed before it serves, as above)
        steps = {s.location: s.state for s in eventually(finished, timeout=120, what="the deletion complete").steps}
        assert steps.get("replica:memory") == pb.DELETION_STEP_STATE_DONE
        assert steps.get("replica:memory-1", pb.DELETION_STEP_STATE_DONE) == pb.DELETION_STEP_STATE_DONE
    finally:
        admin.close()


def _processed(conn: psycopg.Connection[Any], event_id: str) -> bool:
    return conn.execute("SELECT 1 FROM processed_events WHERE event_id = %s", (event_id,)).fetchone() is not None


def _searchable(stack: ClusterStack, replica: str, memory_id: str) -> bool:
    token, tls = stack.token(TENANT, ("reader",)), stack.tls_files("operator")
    stub = Stub(stack.services[replica].target, token, pb_grpc.MemoryServiceStub, tls)
    try:
        request = pb.SearchMemoriesRequest(tenant=TENANT, user="forget-me", query="meetings after 10:30", k=20)
        return any(h.memory.memory_id == memory_id for h in stub.SearchMemories(request, timeout=10).results)
    finally:
        stub.close()


# --- the cluster's closed doors (tests/e2e/test_security.py's tries, on the cluster) -------------

LIVE = ("serving", "policy", "memory", "relay", "worker")


def test_the_cluster_runs_mtls_and_refuses_a_plaintext_grpc_client(run: ClusterRun) -> None:
    stack = run.stack
    assert stack.spec.tls and stack.pki is not None  # `--cluster` turned TLS on by itself
    for name in LIVE:
        target = stack.services[name].target
        # Given a client with a certificate of the cluster's CA: it gets through (the control)
        secure = grpc.secure_channel(target, channel_credentials(operator_tls(stack)))
        assert health(secure) == health_pb2.HealthCheckResponse.SERVING, name
        # Then the same server refuses the same call in plaintext
        assert refused(grpc.insecure_channel(target)) == grpc.StatusCode.UNAVAILABLE, name


# (the console's user may publish there: a dead-letter replay, the operator's one way in)
@pytest.mark.parametrize("user", ["worker", "memory", "no-user"])
def test_a_nats_client_without_the_relays_credentials_cannot_publish_a_learning_event_on_the_cluster(
    run: ClusterRun, user: str
) -> None:
    stack = run.stack
    cluster = stack.nats_cluster
    assert cluster is not None and all(node.is_running for node in cluster.nodes)
    access = stack.nats_access(user) if user != "no-user" else NatsAccess(tls=operator_tls(stack))
    subject = learning_subject(stack, f"forged-{user}")
    # When another service's user (or TLS with no user at all) publishes on the learning subject
    errors = forge_learning_event(stack, access, subject)
    # Then every node refuses it and the replicated stream never holds it
    assert violation(errors), errors
    assert asyncio.run(subject_count(stack, subject)) == 0
