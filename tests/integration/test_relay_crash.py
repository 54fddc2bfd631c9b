"""The relay killed (SIGKILL, by its fault hook) after JetStream acknowledged an event and before the
outbox row was marked: the restarted relay publishes it again, JetStream drops the copy, and the row
ends published with the PubAck's duplicate flag as evidence.
"""

from __future__ import annotations

import signal

import pytest

from services.common.gen.memloop.v1 import serving_service_pb2
from tests.integration.serving_relay_support import Stack, alice_request, make_stack, stack, wait_until

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]

_FAST_LEASE = {"MEMLOOP_RELAY_LEASE_SECONDS": "3", "MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS": "2"}


def test_sigkill_between_puback_and_mark_is_absorbed_by_jetstream_dedupe(stack: Stack) -> None:
    # Given a relay whose fault hook kills it right after its first PubAck
    doomed = stack.start_relay("relay-doomed", MEMLOOP_FAULT_RELAY_CRASH_AFTER_PUBLISH="1", **_FAST_LEASE)
    stub = stack.stub(stack.token())
    request = alice_request(0)
    outbox = serving_service_pb2.GetOutboxEventRequest(tenant="acme", request_id=request.request_id)

    # When a request commits
    response = stub.HandleRequest(request, timeout=30)

    # Then the relay dies by SIGKILL with the event in the stream and its row not marked
    wait_until(lambda: doomed.returncode is not None, 15, "the relay to kill itself")
    assert doomed.returncode == -signal.SIGKILL
    [first] = stack.stream_messages()
    assert first.msg_id == response.event_id
    pending = stub.GetOutboxEvent(outbox)
    assert pending.state == serving_service_pb2.OUTBOX_STATE_PENDING and pending.publish_attempts == 1

    # When a healthy relay starts and the crashed relay's lease lapses
    stack.start_relay("relay-restarted", **_FAST_LEASE)
    wait_until(lambda: stub.GetOutboxEvent(outbox).state == serving_service_pb2.OUTBOX_STATE_PUBLISHED, 20, "the mark")

    # Then the stream still holds the event once, and the row records the duplicate PubAck
    published = stub.GetOutboxEvent(outbox)
    assert published.duplicate is True
    assert published.publish_attempts == 2
    assert published.stream_sequence == first.seq
    assert [m.msg_id for m in stack.stream_messages()] == [response.event_id]
