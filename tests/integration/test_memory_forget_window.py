"""A user-scope forget has no window: learning that commits after the acknowledgement learns nothing.

Before, an ApplyLearning committing between Forget(user)'s acknowledgement and the workflow's
streams step wrote memories the deletion never saw. Memory as a process, real PostgreSQL and NATS;
no serving is configured, so the deletion stays open (its serving step cannot finish) throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision

pytestmark = pytest.mark.integration


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("forget"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-a", memloop_deletion_poll_seconds="3600")


def _memories(node: MemoryNode, user: str) -> list[pb.Memory]:
    return list(node.stub().ListMemories(pb.ListMemoriesRequest(tenant="acme", user=user, page_size=100)).memories)


def test_learning_after_a_user_forget_acknowledgement_writes_nothing(node: MemoryNode) -> None:
    # Given a user with one memory, and a user-scope forget acknowledged (its workflow still open)
    stub, user = node.stub(), random_ref("user")
    stub.ApplyLearning(apply_request(random_ref("evt"), decision("Prefers tea", user=user), user=user))
    ack = stub.Forget(pb.ForgetRequest(tenant="acme", user=user))
    assert not stub.GetDeletion(pb.GetDeletionRequest(tenant="acme", deletion_id=ack.deletion_id)).deletion.complete
    # When an event of that user, committed before the forget, is learned after the acknowledgement
    late = apply_request(random_ref("evt"), decision("Prefers green tea", user=user), user=user)
    late.event_time.FromDatetime(datetime.now(UTC) - timedelta(minutes=1))
    answer = stub.ApplyLearning(late)
    # Then it is processed (a redelivery is a repeat) but nothing of it is stored
    assert list(answer.applied) == []
    assert stub.GetProcessedEvent(pb.GetProcessedEventRequest(tenant="acme", event_id=late.event_id)).processed
    assert [m.text for m in _memories(node, user) if m.state == pb.MEMORY_STATE_ACTIVE] == []
    assert "Prefers green tea" not in [m.text for m in _memories(node, user)]
    # And another user's learning is untouched
    other = random_ref("user")
    stored = stub.ApplyLearning(apply_request(random_ref("evt"), decision("Prefers tea", user=other), user=other))
    assert stored.applied[0].memory_id
