"""Two relays on one outbox under steady load: leases split the rows between them, and the stream
ends with exactly one message per committed event.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.integration.serving_relay_support import Stack, alice_request, make_stack, stack

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]

_REQUESTS = 600


def test_two_relays_publish_every_committed_event_exactly_once(stack: Stack) -> None:
    # Given two relays with small batches, so their claims interleave
    small_batches = {"MEMLOOP_RELAY_BATCH_SIZE": "8", "MEMLOOP_RELAY_MAX_IN_FLIGHT": "32"}
    stack.start_relay("relay-a", **small_batches)
    stack.start_relay("relay-b", **small_batches)
    stub = stack.stub(stack.token())

    # When many requests commit concurrently while both relays run
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda i: stub.HandleRequest(alice_request(i % 4), timeout=30), range(_REQUESTS)))
    committed = {r.event_id for r in responses}
    stack.wait_all_published(60)
    time.sleep(0.5)

    # Then the stream holds each committed event exactly once
    assert len(committed) == _REQUESTS
    ids = Counter(m.msg_id for m in stack.stream_messages())
    assert set(ids) == committed
    assert max(ids.values()) == 1
    # And both relays did part of the work (the last claimer of each row is kept)
    publishers = Counter(row[0] for row in stack.query("SELECT claimed_by FROM outbox"))
    assert len(publishers) == 2, publishers
