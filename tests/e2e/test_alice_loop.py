"""The seed's end-of-day evidence on the Alice fixture, with the whole stack as processes:
the request completes once, a duplicate learning event produces no duplicate memory, an accepted
candidate becomes active, a poisoned procedural candidate is denied, and every transition shares
immutable event and trace references."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from google.protobuf import json_format

from services.cli.alice import run_alice
from services.cli.stack import Stack
from services.cli.trace import TimelineEntry, collect_timeline, format_timeline
from services.common.gen.memloop.v1 import learning_event_pb2, memory_service_pb2, serving_service_pb2
from services.common.nats_connect import connect_nats
from tests.e2e.support import ALICE, Clients, alice_request, eventually, fresh_tenant
from tests.helpers import random_ref

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def tenant() -> str:
    return fresh_tenant()


@pytest.fixture
def clients(stack: Stack, tenant: str) -> Iterator[Clients]:
    made = Clients(stack, tenant)
    yield made
    made.close()


def test_the_alice_fixture_yields_every_evidence_item(stack: Stack, tenant: str) -> None:
    # Given the whole stack, when Alice's four requests go through serving
    run = run_alice(
        stack.services["serving"].target,
        stack.services["memory"].target,
        stack.token(tenant, ("reader", "writer")),
        tenant=tenant,
    )
    # Then each claim holds, by name
    results = {item.name: item for item in run.items}
    for name in (
        "reply_before_learning",
        "episode_active",
        "injection_rejected",
        "preference_superseded",
        "retrieval_returns_only_new",
        "secrets_never_stored",
        "transitions_share_event_and_trace_ids",
        "duplicate_replay_changes_nothing",
        "forget_reaches_every_location",
    ):
        assert name in results, f"{name} was not reached: {[i.name for i in run.items]}"
        assert results[name].ok, f"{name}: {results[name].detail}"


def test_the_reply_returns_with_the_worker_stopped_and_the_event_waits(stack: Stack, clients: Clients) -> None:
    # Given no worker running
    stack.services["worker"].process.terminate(timeout=15)
    try:
        # When Alice states a preference
        response = clients.serving.HandleRequest(alice_request("preference-after-ten", clients.tenant), timeout=10)
        # Then the reply is committed and its event published, but nothing is learned yet
        assert response.reply and response.event_id

        def published() -> serving_service_pb2.GetOutboxEventResponse | None:
            request = serving_service_pb2.GetOutboxEventRequest(tenant=clients.tenant, event_id=response.event_id)
            outbox = clients.serving.GetOutboxEvent(request, timeout=5)
            return outbox if outbox.state == serving_service_pb2.OUTBOX_STATE_PUBLISHED else None

        outbox = eventually(published, what="the relay published the event")
        assert outbox.stream_sequence > 0
        assert not clients.processed(response.event_id)
    finally:
        stack.restart("worker")
    # And once the worker is back the event is learned
    eventually(lambda: clients.processed(response.event_id), what="the event was learned after the restart")
    active = clients.memories(states=[memory_service_pb2.MEMORY_STATE_ACTIVE])
    assert [m.intent_key for m in active] == ["meeting_time_window"]


async def _last_message(stack: Stack, tenant: str) -> tuple[bytes, dict[str, str]]:
    client = await connect_nats(stack.nats_url)
    try:
        js = client.jetstream()
        message = await js.get_last_msg(stack.spec.learning_stream, f"{stack.spec.subject_prefix}.learning.{tenant}")
        return message.data or b"", dict(message.headers or {})
    finally:
        await client.close()


async def _acked_through(stack: Stack, stream_seq: int) -> bool:
    """Whether the worker's durable consumer has acknowledged every message up to `stream_seq`."""
    client = await connect_nats(stack.nats_url)
    try:
        consumer = stack.spec.extra_env.get("MEMLOOP_WORKER_CONSUMER", "memloop-worker")
        info = await client.jetstream().consumer_info(stack.spec.learning_stream, consumer)
        return info.ack_floor is not None and (info.ack_floor.stream_seq or 0) >= stream_seq
    finally:
        await client.close()


def test_the_event_carries_scope_references_and_immutable_ids(stack: Stack, clients: Clients) -> None:
    # Given Bob's mail handled for Alice
    response = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(response.event_id), what="the event was learned")
    # When the stream message is read back
    payload, headers = asyncio.run(_last_message(stack, clients.tenant))
    event = learning_event_pb2.LearningEvent.FromString(payload)
    # Then it carries scope, versions, references and the same ids serving answered with
    assert (event.tenant, event.user, event.thread) == (clients.tenant, "alice", "thr-bob-sync")
    assert dict(event.procedure_versions) == {"schedule_meeting": "3", "reply_style": "7"}
    assert event.content_ref and event.route == "calendar.schedule"
    assert (event.event_id, event.trace_id) == (response.event_id, response.trace_id)
    assert headers["Nats-Msg-Id"] == response.event_id
    assert response.trace_id in headers["traceparent"]
    # And references only: no body text, no phone number
    for fragment in (b"Q1 rollout", b"415 555 0134", b"remember forever", b"Quick sync"):
        assert fragment not in payload


def test_an_event_published_twice_changes_nothing(stack: Stack, clients: Clients) -> None:
    # Given an event already learned
    response = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(response.event_id), what="the event was learned")
    before = sorted((m.memory_id, m.state) for m in clients.memories())
    audit_before = len(clients.audit(response.event_id))
    payload, _ = asyncio.run(_last_message(stack, clients.tenant))

    # When the same event is published again under a new message id (past JetStream's dedupe)
    async def republish() -> int:
        client = await connect_nats(stack.nats_url)
        try:
            js = client.jetstream()
            subject = f"{stack.spec.subject_prefix}.learning.{clients.tenant}"
            ack = await js.publish(subject, payload, headers={"Nats-Msg-Id": random_ref("again")})
            return int(ack.seq)
        finally:
            await client.close()

    republished_seq = asyncio.run(republish())
    # And the request is replayed too
    replay = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)

    # Then nothing changed: one response, one memory per accepted candidate, the same audit
    def settled() -> bool:
        return sorted((m.memory_id, m.state) for m in clients.memories()) == before

    eventually(settled, what="memories unchanged")
    # And the worker has taken and acknowledged the second delivery (the consumer's ack floor passed it)
    eventually(lambda: asyncio.run(_acked_through(stack, republished_seq)), what="the duplicate acknowledged")
    assert replay.replayed and replay.event_id == response.event_id
    assert sorted((m.memory_id, m.state) for m in clients.memories()) == before
    assert len(clients.audit(response.event_id)) == audit_before
    assert len([m for m in clients.memories() if "Bob" in m.text]) == 1


def test_the_trace_shows_every_hop_with_one_event_id_and_one_trace_id(stack: Stack, clients: Clients) -> None:
    # Given Bob's mail learned
    response = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(response.event_id), what="the event was learned")

    # When its timeline is collected the way `memloop trace` does, once every hop asserted below
    # is there (each service exports its spans on its own schedule, so one span says nothing of the others)
    def has_every_hop(entries: list[TimelineEntry]) -> bool:
        hops = [e.hop for e in entries]
        return (
            "span memloop-serving" in hops
            and "serving.commit" in hops
            and "relay.published" in hops
            and any("worker" in e.hop or "worker" in e.detail for e in entries)
            and any("PolicyService/BatchEvaluate" in e.detail for e in entries)
            and any("MemoryService/BatchApplyLearning" in e.detail for e in entries)
            and any(h.startswith("memory.candidate.rejected") for h in hops)
            and any(h.startswith("memory.memory.stored") for h in hops)
        )

    def complete_timeline() -> list[TimelineEntry] | None:
        entries = collect_timeline(
            stack.services["serving"].target,
            stack.services["memory"].target,
            stack.token(clients.tenant, ("reader",)),
            clients.tenant,
            "req-alice-0001",
            stack.span_file,
        )
        return entries if has_every_hop(entries) else None

    entries = eventually(complete_timeline, what="every hop's span and audit entry reached the timeline")
    hops = [e.hop for e in entries]
    # Then serving's commit, the relay's publish, the worker, policy and memory all appear
    assert len(format_timeline(entries)) == len(entries)
    assert hops[0] == "span memloop-serving"  # the request's own span opens the trace
    assert hops.index("serving.commit") < hops.index("relay.published")
    assert "relay.published" in hops
    assert any("worker" in e.hop or "worker" in e.detail for e in entries)
    assert any("MemoryService/BatchApplyLearning" in e.detail for e in entries)
    assert any(h.startswith("memory.candidate.rejected") for h in hops)
    assert any(h.startswith("memory.memory.stored") for h in hops)
    # And every line carries the same event id and trace id
    assert {e.event_id for e in entries} == {response.event_id}
    assert {e.trace_id for e in entries} == {response.trace_id}


def test_a_poisoned_procedure_is_rejected_for_its_reason(stack: Stack, clients: Clients) -> None:
    # Given Bob's mail with its P.S. addressed to the assistant
    response = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(response.event_id), what="the event was learned")
    # When the audit of that event is read
    audit = clients.audit(response.event_id)
    # Then a rejection names the external procedure and no stored or reviewed record holds it
    rejected = [a for a in audit if a.action == "candidate.rejected"]
    assert any("EXTERNAL_PROCEDURAL" in str(json_format.MessageToDict(a.detail)) for a in rejected)
    assert not [m for m in clients.memories() if "forward every invoice" in m.text]
    reviews = clients.memory.ListReviewItems(
        memory_service_pb2.ListReviewItemsRequest(tenant=clients.tenant, user="alice"), timeout=10
    ).review_items
    assert not [r for r in reviews if "invoice" in r.decision.candidate.text]
    assert ALICE["requests"][0]["expect"]["rejected"][0]["origin"] == "external_email"
