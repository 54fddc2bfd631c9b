"""BatchApplyLearning against real PostgreSQL, memory as a process: many events in one transaction,
each with its own result, and the guarantees of ApplyLearning kept per event."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.rpc import code_pb2

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from tests.fuzz.harness import RowCounter
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision

pytestmark = pytest.mark.integration

INTENT = "meeting_time_window"


@pytest.fixture
def node(cluster: MemoryCluster) -> MemoryNode:
    return cluster.start("memory-a")


def _batch(*requests: pb.ApplyLearningRequest) -> pb.BatchApplyLearningRequest:
    return pb.BatchApplyLearningRequest(tenant="acme", requests=list(requests))


def _unsigned(request: pb.ApplyLearningRequest) -> pb.ApplyLearningRequest:
    for message in request.decisions:
        message.signature = b""
    return request


def _active(stub: object, intent: str) -> list[pb.Memory]:
    request = pb.ListMemoriesRequest(tenant="acme", user="alice", intent_key=intent, states=[pb.MEMORY_STATE_ACTIVE])
    return list(stub.ListMemories(request).memories)  # type: ignore[attr-defined]


def test_a_batch_commits_its_good_events_refuses_the_bad_one_alone_and_a_replay_changes_nothing(
    cluster: MemoryCluster, node: MemoryNode
) -> None:
    # Given an event memory already applied
    stub = node.stub()
    old = stub.ApplyLearning(apply_request("evt-old", decision("Alice prefers green tea", intent="drink")))
    counter = RowCounter(cluster.database_url)
    # Given a batch holding: a new event, that event again, the old event, an unsigned decision, a later
    # statement of the first event's intent, and an item with an invalid field
    batch = _batch(
        apply_request("evt-ten", decision("Alice takes meetings after 10:00", intent=INTENT)),
        apply_request("evt-ten", decision("Alice takes meetings after 10:00", intent=INTENT)),
        apply_request("evt-old", decision("Alice prefers green tea", intent="drink")),
        _unsigned(apply_request("evt-bad", decision("Alice likes the colour red", intent="colour"))),
        apply_request("evt-nine", decision("Alice takes meetings after 09:00", intent=INTENT)),
        pb.ApplyLearningRequest(event_id="evt-nobody", tenant="acme", user=""),
    )

    # When memory applies the batch
    results = list(stub.BatchApplyLearning(batch).results)

    # Then there is one result per item, in order
    assert [r.event_id for r in results] == ["evt-ten", "evt-ten", "evt-old", "evt-bad", "evt-nine", "evt-nobody"]
    ten, again, replayed, bad, nine, invalid = results
    # Then the unsigned decision and the invalid field were refused alone, each with its own status
    assert (bad.HasField("outcome"), bad.error.code, bad.error.reason) == (
        False,
        code_pb2.PERMISSION_DENIED,
        "DECISION_SIGNATURE_INVALID",
    )
    assert (invalid.error.code, list(invalid.error.fields)) == (code_pb2.INVALID_ARGUMENT, ["requests[5].user"])
    # Then the new events were applied, the repeat and the old event answered as replays
    assert not ten.HasField("error") and not ten.outcome.already_processed
    assert again.outcome.already_processed and again.outcome.applied[0].memory_id == ten.outcome.applied[0].memory_id
    assert replayed.outcome.already_processed and replayed.outcome.applied[0].memory_id == old.applied[0].memory_id
    # Then the later statement superseded the earlier one of the same intent: one active record
    assert nine.outcome.applied[0].superseded_memory_id == ten.outcome.applied[0].memory_id
    assert [m.memory_id for m in _active(stub, INTENT)] == [nine.outcome.applied[0].memory_id]
    # Then nothing of the refused events was written
    assert not stub.GetProcessedEvent(pb.GetProcessedEventRequest(tenant="acme", event_id="evt-bad")).processed
    assert _active(stub, "colour") == []
    assert stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant="acme", event_id="evt-bad")).audit_events == []
    # Then the ledger, the provenance and the audit trail are each event's own
    for event_id in ("evt-ten", "evt-nine"):
        assert stub.GetProcessedEvent(pb.GetProcessedEventRequest(tenant="acme", event_id=event_id)).processed
    actions = [
        e.action
        for e in stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant="acme", event_id="evt-nine")).audit_events
    ]
    assert actions == ["memory.superseded", "memory.stored", "event.processed"]
    written = counter.counts()

    # When the whole batch is delivered again
    again_results = list(stub.BatchApplyLearning(batch).results)

    # Then every applied event is a replay with its stored outcome, the refusals are refused again,
    # and not one row changed anywhere in the database
    assert [r.outcome.already_processed for r in again_results if r.HasField("outcome")] == [True] * 4
    assert [r.error.code for r in again_results if r.HasField("error")] == [
        code_pb2.PERMISSION_DENIED,
        code_pb2.INVALID_ARGUMENT,
    ]
    assert again_results[4].outcome.applied == nine.outcome.applied
    assert counter.counts() == written
    counter.close()


def test_concurrent_batches_over_the_same_events_in_opposite_orders_apply_each_event_once(node: MemoryNode) -> None:
    # Given two batches naming the same six events of two users, in opposite orders
    stub = node.stub()
    requests = [
        apply_request(f"evt-{i}", decision(f"Note number {i}", intent=f"note_{i % 3}", user=user), user=user)
        for i, user in enumerate(["alice", "bob"] * 3)
    ]
    forward, backward = _batch(*requests), _batch(*reversed(requests))

    # When both are applied at the same time
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = [
            list(f.result().results) for f in [pool.submit(stub.BatchApplyLearning, b) for b in (forward, backward)]
        ]

    # Then both calls succeeded for every item, and each event was applied exactly once
    items = [r for results in answers for r in results]
    assert all(r.HasField("outcome") for r in items)
    fresh = sorted(r.event_id for r in items if not r.outcome.already_processed)
    assert fresh == sorted(f"evt-{i}" for i in range(6))
    # Then each (user, intent) has one active record
    for intent in ("note_0", "note_1", "note_2"):
        assert len(_active(stub, intent)) == 1


def _story(user: str) -> list[pb.ApplyLearningRequest]:
    """One user's week, events in delivery order: a changed preference, a return to the first
    wording, a repeat, a late older statement, a duplicate delivery, and a repeat then a change of
    a preference stored before the batch (`{user}-e0`)."""
    start = datetime(2026, 11, 2, 9, tzinfo=UTC)
    lines = [
        ("e1", "Meetings after 10:00 only", INTENT, 60),
        ("e2", "Meetings after 11:00 only", INTENT, 120),
        ("e3", "Meetings after 10:00 only", INTENT, 180),  # the first wording again: a new record
        ("e4", "Meetings after 10:00 only", INTENT, 240),  # a repeat: reinforces e3's, restated
        ("e5", "Meetings after 09:00 only", INTENT, 30),  # older than all: joins the history
        ("e2", "Meetings after 11:00 only", INTENT, 120),  # delivered twice
        ("e6", "Tea in the afternoon", "drink", 60),  # repeats e0's record
        ("e7", "Coffee in the afternoon", "drink", 90),  # then supersedes it
    ]
    out = []
    for event, text, intent, minutes in lines:
        request = apply_request(f"{user}-{event}", decision(text, intent=intent, user=user), user=user)
        request.event_time.FromDatetime(start + timedelta(minutes=minutes))
        out.append(request)
    return out


def _shape(stub: object, user: str) -> tuple[set[tuple[Any, ...]], list[tuple[str, ...]]]:
    """The user's memories and audit, with ids replaced by the creating event (`e1`…): comparable
    across users."""
    listed = stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", user=user, page_size=100))  # type: ignore[attr-defined]
    memories = list(listed.memories)
    creator = {m.memory_id: m.source_event_ids[0].split("-")[-1] for m in memories}
    shape = {
        (
            creator[m.memory_id],
            m.text,
            m.intent_key,
            m.state,
            creator.get(m.supersedes, ""),
            creator.get(m.superseded_by, ""),
            tuple(sorted(e.split("-")[-1] for e in m.source_event_ids)),
        )
        for m in memories
    }
    audit = []
    for event in ("e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7"):
        found = stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant="acme", event_id=f"{user}-{event}"))  # type: ignore[attr-defined]
        audit.append(tuple(sorted(f"{event}:{a.action}:{creator.get(a.memory_id, '')}" for a in found.audit_events)))
    return shape, audit


def test_one_batch_writes_exactly_what_the_same_events_write_one_call_each(node: MemoryNode) -> None:
    # Given two users with the same preference stored before, and the same week of events each
    stub = node.stub()
    for user in ("batched", "single"):
        first = apply_request(f"{user}-e0", decision("Tea in the afternoon", intent="drink", user=user), user=user)
        first.event_time.FromDatetime(datetime(2026, 11, 2, 9, tzinfo=UTC))
        stub.ApplyLearning(first)
    # When one user's week is applied as ONE batch, the other's one event per call
    answers = list(stub.BatchApplyLearning(_batch(*_story("batched"))).results)
    for request in _story("single"):
        stub.ApplyLearning(request)

    # Then every item of the batch has an outcome; the repeated delivery is a replay
    assert all(r.HasField("outcome") for r in answers)
    assert [r.outcome.already_processed for r in answers] == [False] * 5 + [True] + [False] * 2
    # And the memories, their states, links, sources and audit rows are the same for both users
    batched, single = _shape(stub, "batched"), _shape(stub, "single")
    assert batched == single
    # And that shape is the one intended: one active record per intent, the late statement in the history
    active = sorted((text, intent) for _, text, intent, state, *_ in batched[0] if state == pb.MEMORY_STATE_ACTIVE)
    assert active == [("Coffee in the afternoon", "drink"), ("Meetings after 10:00 only", INTENT)]
    late = next(m for m in batched[0] if m[0] == "e5")
    assert (late[3], late[4], late[5]) == (pb.MEMORY_STATE_SUPERSEDED, "", "e1")
    tea = next(m for m in batched[0] if m[0] == "e0")
    assert (tea[3], tea[5], tea[6]) == (pb.MEMORY_STATE_SUPERSEDED, "e7", ("e0", "e6"))
    # And a replay of the whole batch writes nothing
    before = (
        _shape(stub, "batched"),
        len(list(stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", page_size=100)).memories)),
    )
    again = list(stub.BatchApplyLearning(_batch(*_story("batched"))).results)
    assert all(r.outcome.already_processed for r in again)
    assert (
        _shape(stub, "batched"),
        len(list(stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", page_size=100)).memories)),
    ) == before
