"""Input validation, authorization and review, against the memory process and real NATS."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.grpc_errors import error_details
from services.common.nats_connect import connect_nats
from services.common.vocabulary import MemoryType
from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, Stub, apply_request, decision, token

pytestmark = pytest.mark.integration


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("memory"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-a")


def _failure(call: Callable[[], object]) -> tuple[grpc.StatusCode, str, list[str]]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    reason, fields = error_details(caught.value)
    return caught.value.code(), reason, fields


def _nothing_written(stub: Stub, event_id: str) -> bool:
    processed = stub.GetProcessedEvent(pb.GetProcessedEventRequest(tenant="acme", event_id=event_id)).processed
    memories = stub.ListMemories(pb.ListMemoriesRequest(tenant="acme")).memories
    audit = stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant="acme")).audit_events
    return not processed and not memories and not audit


def test_bad_input_is_invalid_argument_naming_the_field_and_writes_nothing(node: MemoryNode) -> None:
    stub, event_id = node.stub(), random_ref("evt")
    good = decision("Prefers mornings", intent="meeting_time_window")
    unspecified = cpb.Decision()
    unspecified.CopyFrom(good)
    unspecified.outcome = cpb.DECISION_OUTCOME_UNSPECIFIED
    empty_text = cpb.Decision()
    empty_text.CopyFrom(good)
    empty_text.candidate.text = " "
    bad_intent = cpb.Decision()
    bad_intent.CopyFrom(good)
    bad_intent.candidate.intent_key = "Meeting Window!"
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: stub.ApplyLearning(apply_request(event_id, good, unspecified)), "decisions[1].outcome"),
        (lambda: stub.ApplyLearning(apply_request(event_id, empty_text)), "decisions[0].candidate.text"),
        (lambda: stub.ApplyLearning(apply_request(event_id, good, bad_intent)), "decisions[1].candidate.intent_key"),
        (lambda: stub.ApplyLearning(apply_request("", good)), "event_id"),
        (lambda: stub.ApplyLearning(apply_request(event_id, good, user="")), "user"),
        (lambda: stub.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query="x", k=-1)), "k"),
        (lambda: stub.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice")), "query"),
        (lambda: stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", page_size=-1)), "page_size"),
        (lambda: stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", page_token="garbage")), "page_token"),
        (
            lambda: stub.SupersedeMemory(pb.SupersedeMemoryRequest(tenant="acme", memory_id="m", text="t")),
            "request_id",
        ),
        (
            lambda: stub.ResolveReviewItem(pb.ResolveReviewItemRequest(tenant="acme", review_item_id="r")),
            "resolution",
        ),
    ]
    for call, field in cases:
        # When: a request has one bad field
        code, _, fields = _failure(call)
        # Then: INVALID_ARGUMENT naming exactly that field, and nothing was written
        assert (code, fields) == (grpc.StatusCode.INVALID_ARGUMENT, [field])
    assert _nothing_written(stub, event_id)


def test_a_page_token_only_continues_the_listing_it_came_from(node: MemoryNode) -> None:
    stub = node.stub()
    stub.ApplyLearning(apply_request(random_ref("evt"), *[decision(f"fact {i}") for i in range(5)]))
    first = stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", user="alice", page_size=2))
    rest = stub.ListMemories(
        pb.ListMemoriesRequest(tenant="acme", user="alice", page_size=10, page_token=first.next_page_token)
    )
    assert len(first.memories) == 2 and len(rest.memories) == 3 and rest.next_page_token == ""
    assert not {m.memory_id for m in first.memories} & {m.memory_id for m in rest.memories}
    code, _, fields = _failure(
        lambda: stub.ListMemories(pb.ListMemoriesRequest(tenant="acme", user="bob", page_token=first.next_page_token))
    )
    assert (code, fields) == (grpc.StatusCode.INVALID_ARGUMENT, ["page_token"])


def test_another_tenant_is_denied_before_anything_is_looked_up(node: MemoryNode) -> None:
    # Given: a memory of tenant acme
    stored = node.stub().ApplyLearning(apply_request(random_ref("evt"), decision("Prefers tea")))
    memory_id = stored.applied[0].memory_id
    globex = node.stub(token("globex", ("reader", "writer", "reviewer", "admin")))
    reader = node.stub(token("acme", ("reader",)))
    calls: list[Callable[[], object]] = [
        lambda: globex.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id=memory_id)),
        lambda: globex.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id="does-not-exist")),
        lambda: globex.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query="tea")),
        lambda: globex.ApplyLearning(apply_request(random_ref("evt"), decision("x"))),
        lambda: globex.ListAuditEvents(pb.ListAuditEventsRequest(tenant="acme")),
        lambda: reader.ApplyLearning(apply_request(random_ref("evt"), decision("x"))),
        lambda: reader.ResolveReviewItem(pb.ResolveReviewItemRequest(tenant="acme", review_item_id="r")),
    ]
    # When/Then: every call is PERMISSION_DENIED, for an existing id and a missing one alike
    for call in calls:
        assert _failure(call)[0] == grpc.StatusCode.PERMISSION_DENIED
    anonymous = node.stub("")
    assert _failure(lambda: anonymous.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id=memory_id)))[0] == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    forget = pb.ForgetRequest(tenant="acme", memory_id=memory_id)
    assert _failure(lambda: reader.Forget(forget))[0] == grpc.StatusCode.PERMISSION_DENIED
    assert _failure(lambda: globex.Forget(forget))[0] == grpc.StatusCode.PERMISSION_DENIED
    deletion = pb.GetDeletionRequest(tenant="acme", deletion_id="does-not-exist")
    assert _failure(lambda: globex.GetDeletion(deletion))[0] == grpc.StatusCode.PERMISSION_DENIED


async def test_review_notice_then_approval_supersedes_and_denial_is_final(
    node: MemoryNode, infra: TestInfra, nats_prefix: str
) -> None:
    # Given: a subscriber to acme's review notices and an active meeting preference
    client = await connect_nats(infra.nats_url)
    notices = await client.subscribe(f"{nats_prefix}.review.acme")
    service, reviewer = node.stub(), node.stub(token("acme", ("reviewer",), subject="rita"))
    active = await asyncio.to_thread(
        service.ApplyLearning, apply_request(random_ref("evt"), decision("after 10:00", intent="meeting_time_window"))
    )
    event_id = random_ref("evt")
    held = await asyncio.to_thread(
        service.ApplyLearning,
        apply_request(
            event_id,
            decision("after 09:00", intent="meeting_time_window", outcome=cpb.DECISION_OUTCOME_REVIEW),
            decision("CC my manager on invites", kind=MemoryType.PROCEDURAL, outcome=cpb.DECISION_OUTCOME_REVIEW),
        ),
    )
    # Then: a content-free notice per review item
    received = [json.loads((await notices.next_msg(timeout=10)).data) for _ in range(2)]
    await client.close()
    assert {n["review_item_id"] for n in received} == {a.review_item_id for a in held.applied}
    assert all(set(n) == {"tenant", "user", "review_item_id", "event_id"} for n in received)
    approve_id, deny_id = (a.review_item_id for a in held.applied)
    # When: the reviewer approves one and denies the other
    approved = await asyncio.to_thread(
        reviewer.ResolveReviewItem,
        pb.ResolveReviewItemRequest(
            tenant="acme", review_item_id=approve_id, resolution=pb.REVIEW_RESOLUTION_APPROVE, reason="confirmed"
        ),
    )
    denied = await asyncio.to_thread(
        reviewer.ResolveReviewItem,
        pb.ResolveReviewItemRequest(
            tenant="acme", review_item_id=deny_id, resolution=pb.REVIEW_RESOLUTION_DENY, reason="not asked"
        ),
    )
    # Then: approval went through supersession; denial stored nothing; both audited with reviewer and reason
    new = await asyncio.to_thread(
        service.GetMemory, pb.GetMemoryRequest(tenant="acme", memory_id=approved.review_item.memory_id)
    )
    assert new.memory.state == pb.MEMORY_STATE_ACTIVE and new.memory.supersedes == active.applied[0].memory_id
    assert denied.review_item.state == pb.REVIEW_STATE_DENIED and denied.review_item.memory_id == ""
    audit = (
        await asyncio.to_thread(service.ListAuditEvents, pb.ListAuditEventsRequest(tenant="acme", event_id=event_id))
    ).audit_events
    resolutions = {
        a.action: (a.actor, json_format.MessageToDict(a.detail)["reason"])
        for a in audit
        if a.action in ("review.approved", "review.denied")
    }
    assert resolutions["review.approved"] == ("rita", "confirmed")
    assert resolutions["review.denied"] == ("rita", "not asked")
    # Then: a verdict is final; repeating the same verdict is harmless
    flip = pb.ResolveReviewItemRequest(tenant="acme", review_item_id=deny_id, resolution=pb.REVIEW_RESOLUTION_APPROVE)
    assert _failure(lambda: reviewer.ResolveReviewItem(flip))[1] == "REVIEW_ALREADY_RESOLVED"
    again = pb.ResolveReviewItemRequest(tenant="acme", review_item_id=deny_id, resolution=pb.REVIEW_RESOLUTION_DENY)
    assert reviewer.ResolveReviewItem(again).review_item == denied.review_item
