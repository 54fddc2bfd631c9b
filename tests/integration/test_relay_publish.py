"""Serving and the relay as real processes on PostgreSQL + JetStream, with no worker anywhere.

Proves the serving path answers without learning (the event waits in the stream, unconsumed),
that a request id yields one result, one tool outcome, one outbox row and one stream message
however it is repeated, and that the relay exports its backlog and prunes what it published.
"""

from __future__ import annotations

import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from services.common.infra.processes import free_port
from tests.integration.serving_relay_support import (
    Stack,
    alice_request,
    make_stack,
    stack,
    stream_consumers,
    wait_until,
)

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]


def test_reply_returns_without_any_worker_and_the_event_waits_in_the_stream(stack: Stack) -> None:
    # Given serving and a relay, and no worker (no consumer on the stream)
    stack.start_relay()
    stub = stack.stub(stack.token())
    request = alice_request(0)

    # When Alice's request is handled (bench/bench_serving.py measures how fast)
    response = stub.HandleRequest(request, timeout=30)

    # Then the reply arrived with no consumer on the stream, committed with its event
    assert response.replayed is False and response.event_id and len(response.trace_id) == 32
    assert response.reply == request.reply
    outbox = serving_service_pb2.GetOutboxEventRequest(tenant="acme", request_id=request.request_id)
    wait_until(
        lambda: stub.GetOutboxEvent(outbox).state == serving_service_pb2.OUTBOX_STATE_PUBLISHED, 15, "publication"
    )

    # And the event waits in the stream, unconsumed, carrying references only
    [message] = stack.stream_messages()
    assert stream_consumers(stack.nats_url, stack.stream) == 0
    assert message.subject == f"{stack.prefix}.learning.acme"
    assert message.msg_id == response.event_id
    assert message.headers["traceparent"].split("-")[1] == response.trace_id
    event = learning_event_pb2.LearningEvent.FromString(message.data)
    assert (event.event_id, event.request_id, event.content_ref) == (
        response.event_id,
        request.request_id,
        response.content_ref,
    )
    assert dict(event.procedure_versions) == {"schedule_meeting": "3", "reply_style": "7"}
    assert event.tool_outcomes[0].ref == "cal-evt-7781"
    assert b"Q1 rollout" not in message.data and b"415 555" not in message.data
    evidence = stub.GetOutboxEvent(outbox)
    assert evidence.stream_sequence == message.seq and evidence.duplicate is False
    assert evidence.publish_attempts == 1 and evidence.event == event

    # And one trace links serving's commit to the relay's publish span (each process exports its
    # spans on its own schedule, off the request path: wait until both have)
    def both_exported() -> bool:
        names = {s["service"] for s in stack.spans() if s["trace_id"] == response.trace_id}
        return {"memloop-serving", "memloop-relay"} <= names

    wait_until(both_exported, 15, "serving's and the relay's spans in the span file")
    spans = stack.spans()
    [publish] = [s for s in spans if s["name"] == "relay.publish"]
    assert publish["trace_id"] == response.trace_id
    assert publish["attributes"]["memloop.event_id"] == response.event_id
    assert message.headers["traceparent"].split("-")[2] == publish["span_id"]
    serving_span_ids = {s["span_id"] for s in spans if s["trace_id"] == response.trace_id and s is not publish}
    assert publish["parent_span_id"] in serving_span_ids


def test_one_request_id_is_one_result_one_tool_outcome_one_event_one_message(stack: Stack) -> None:
    # Given a relay, and two request ids: one replayed in sequence, one sent concurrently
    stack.start_relay()
    stub = stack.stub(stack.token())
    sequential, concurrent = alice_request(0), alice_request(0)

    # When the first is sent 10 times in a row and the second 10 times at once
    in_a_row = [stub.HandleRequest(sequential, timeout=30) for _ in range(10)]
    with ThreadPoolExecutor(max_workers=10) as pool:
        at_once = list(pool.map(lambda _: stub.HandleRequest(concurrent, timeout=30), range(10)))

    # Then each id has one outcome: the same answer ten times, only the first not a replay
    for responses in (in_a_row, at_once):
        assert len({(r.result_id, r.event_id, r.content_ref, r.trace_id) for r in responses}) == 1
        assert sum(not r.replayed for r in responses) == 1
        assert len({r.commit_time.ToNanoseconds() for r in responses}) == 1
    assert [r.replayed for r in in_a_row] == [False] + [True] * 9

    # And one result, one tool outcome, one outbox row, one content blob, one stream message each
    for request in (sequential, concurrent):
        for table in ("results", "tool_outcomes", "outbox", "content_blobs"):
            assert stack.count(table, request.request_id) == 1, (table, request.request_id)
    stack.wait_all_published(15)
    time.sleep(0.5)
    messages = stack.stream_messages()
    assert sorted(m.msg_id for m in messages) == sorted({in_a_row[0].event_id, at_once[0].event_id})


def test_relay_exports_backlog_metrics_and_prunes_published_rows(stack: Stack) -> None:
    # Given a committed event before any relay runs
    stub = stack.stub(stack.token())
    stub.HandleRequest(alice_request(1), timeout=30)
    time.sleep(1.1)

    # When a relay with a one-second retention starts, with its metrics endpoint
    metrics_port = free_port()
    stack.start_relay(
        MEMLOOP_METRICS_PORT=str(metrics_port),
        MEMLOOP_RELAY_RETENTION_SECONDS="1",
        MEMLOOP_RELAY_PRUNE_INTERVAL_SECONDS="0.5",
    )

    # Then the gauges are exported, the event reaches the stream, and its row is pruned afterwards
    body = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
    assert "memloop_outbox_backlog" in body and "memloop_outbox_oldest_age_seconds" in body
    wait_until(lambda: len(stack.stream_messages()) == 1, 15, "the event in the stream")
    wait_until(lambda: stack.query("SELECT count(*) FROM outbox")[0][0] == 0, 15, "pruning")
    assert stack.query("SELECT count(*) FROM results")[0][0] == 1


def test_serving_wakes_an_idle_relay_that_would_not_poll_for_ten_minutes(stack: Stack) -> None:
    # Given serving with its default wake-up (its waker thread) and a relay whose backstop poll is
    # ten minutes away, idle once it has claimed what was there at its start
    stack.start_relay(MEMLOOP_RELAY_POLL_SECONDS="600")
    stub = stack.stub(stack.token())
    warm = alice_request(0)
    stub.HandleRequest(warm, timeout=30)
    stack.wait_all_published(timeout=60)

    # When more requests commit their events
    requests = [alice_request(i % 4) for i in range(1, 6)]
    with ThreadPoolExecutor(5) as pool:
        list(pool.map(lambda r: stub.HandleRequest(r, timeout=30), requests))

    # Then the relay publishes them long before its poll would have: a NOTIFY woke it
    stack.wait_all_published(timeout=60)
