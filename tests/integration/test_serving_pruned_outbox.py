"""An event still resolves by its request id after the relay pruned its outbox row.

Forget by request id asks serving for the event of a request (GetOutboxEvent); before, once the
relay pruned the published row (after the retention period), serving answered NOT_FOUND and the
forget could not be made. Serving and relay as processes on real PostgreSQL and NATS.
"""

from __future__ import annotations

import pytest

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from tests.integration.serving_relay_support import Stack, alice_request, make_stack, stack, wait_until

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]


def test_get_outbox_event_by_request_id_after_the_relay_pruned_the_row(stack: Stack) -> None:
    # Given a committed request, published and then pruned by a relay with a zero retention
    stub = stack.stub(stack.token())
    request = alice_request(1)
    answer = stub.HandleRequest(request, timeout=30)
    stack.start_relay(MEMLOOP_RELAY_RETENTION_SECONDS="0", MEMLOOP_RELAY_PRUNE_INTERVAL_SECONDS="0.5")
    wait_until(lambda: stack.query("SELECT count(*) FROM outbox")[0][0] == 0, 30, "the relay to prune the row")
    # When the event is looked up by its request id, and by its event id
    by_request = stub.GetOutboxEvent(
        serving_service_pb2.GetOutboxEventRequest(tenant="acme", request_id=request.request_id), timeout=10
    )
    by_event = stub.GetOutboxEvent(
        serving_service_pb2.GetOutboxEventRequest(tenant="acme", event_id=answer.event_id), timeout=10
    )
    # Then both name the event, its user and its content reference, reported as published
    for found in (by_request, by_event):
        assert (found.event.event_id, found.event.user, found.event.content_ref) == (
            answer.event_id,
            request.user,
            answer.content_ref,
        )
        assert found.event.request_id == request.request_id and found.event.trace_id == answer.trace_id
        assert found.state == serving_service_pb2.OUTBOX_STATE_PUBLISHED
    assert isinstance(by_request.event, learning_event_pb2.LearningEvent)
