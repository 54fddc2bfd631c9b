"""Events are learned out of order (parallel workers, redelivery): the later statement of an
intent must win whatever order memory applies them in, and the history stays one chain."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from tests.helpers import SpawnService, TestInfra
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision

pytestmark = pytest.mark.integration

INTENT = "meeting_time_window"
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("ordering"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-a")


def _stated(event_id: str, text: str, minutes: int) -> pb.ApplyLearningRequest:
    request = apply_request(event_id, decision(text, intent=INTENT))
    request.event_time.FromDatetime(T0 + timedelta(minutes=minutes))
    return request


def _chain(node: MemoryNode, memory_id: str) -> list[tuple[str, int]]:
    chain = node.stub().GetLineage(pb.GetLineageRequest(tenant="acme", memory_id=memory_id)).chain
    return [(m.text, m.state) for m in chain]


def test_an_older_statement_learned_last_does_not_win(node: MemoryNode) -> None:
    # Given Alice's 09:00 update (stated second) learned first
    stub = node.stub()
    nine = stub.ApplyLearning(_stated("evt-nine", "meetings after 09:00 are fine", minutes=5))
    # When her earlier 10:00 instruction is learned afterwards
    ten = stub.ApplyLearning(_stated("evt-ten", "keep my meetings after 10:00", minutes=1))
    # Then the 09:00 record stays the one active, and the 10:00 one joins the history before it
    active = stub.ListMemories(
        pb.ListMemoriesRequest(tenant="acme", user="alice", intent_key=INTENT, states=[pb.MEMORY_STATE_ACTIVE])
    ).memories
    assert [m.memory_id for m in active] == [nine.applied[0].memory_id]
    expected = [
        ("keep my meetings after 10:00", pb.MEMORY_STATE_SUPERSEDED),
        ("meetings after 09:00 are fine", pb.MEMORY_STATE_ACTIVE),
    ]
    assert _chain(node, ten.applied[0].memory_id) == expected
    assert _chain(node, nine.applied[0].memory_id) == expected


def test_a_late_statement_is_slotted_into_the_middle_of_the_history(node: MemoryNode) -> None:
    # Given statements at minutes 1 and 9 learned in order
    stub = node.stub()
    stub.ApplyLearning(_stated("evt-1", "meetings after 11:00 only", minutes=1))
    last = stub.ApplyLearning(_stated("evt-9", "meetings after 08:00 are fine", minutes=9))
    # When the statement of minute 5 arrives last
    stub.ApplyLearning(_stated("evt-5", "meetings after 10:00 please", minutes=5))
    # Then the chain is in stated order and only the newest is active
    assert _chain(node, last.applied[0].memory_id) == [
        ("meetings after 11:00 only", pb.MEMORY_STATE_SUPERSEDED),
        ("meetings after 10:00 please", pb.MEMORY_STATE_SUPERSEDED),
        ("meetings after 08:00 are fine", pb.MEMORY_STATE_ACTIVE),
    ]


def test_a_repeated_statement_carries_its_newest_time_so_an_older_one_learned_later_does_not_win(
    node: MemoryNode,
) -> None:
    # Given "concise" stated at minute 1 and again at minute 3 (the repeat joins the same memory)
    stub = node.stub()
    concise = stub.ApplyLearning(_stated("evt-concise-1", "keep my replies concise", minutes=1))
    again = stub.ApplyLearning(_stated("evt-concise-3", "keep my replies concise", minutes=3))
    assert again.applied[0].memory_id == concise.applied[0].memory_id
    # When "detailed", stated at minute 2, is learned after both
    detailed = stub.ApplyLearning(_stated("evt-detailed-2", "keep my replies detailed", minutes=2))
    # Then the owner's latest statement (concise, minute 3) is still the active one
    active = stub.ListMemories(
        pb.ListMemoriesRequest(tenant="acme", user="alice", intent_key=INTENT, states=[pb.MEMORY_STATE_ACTIVE])
    ).memories
    assert [m.text for m in active] == ["keep my replies concise"]
    assert _chain(node, detailed.applied[0].memory_id) == [
        ("keep my replies detailed", pb.MEMORY_STATE_SUPERSEDED),
        ("keep my replies concise", pb.MEMORY_STATE_ACTIVE),
    ]
