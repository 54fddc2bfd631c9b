"""Alice's items for the review queue: two mails the loop must hold for a person (`make demo` ends
on the console's review queue with them waiting; the console's e2e tests start from them too).

A procedure from the owner always needs a human; a hedged restatement of an active preference
contradicts it with too little confidence to supersede it. Both arrive as REVIEW decisions.
"""

from __future__ import annotations

import time

from services.cli.fixtures import handle_request_from_fixture, load_fixture
from services.common.gen.memloop.v1 import (
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel


def queue_alice_reviews(
    serving_target: str, memory_target: str, token: str, *, tenant: str = "", timeout: float = 60.0
) -> list[memory_service_pb2.ReviewItem]:
    """Send the review mails for `tenant` (the fixture's by default); return the pending items once learned.

    Repeat-safe: the request ids make serving answer a repeat with the first result.
    """
    fixture = load_fixture("alice_review.json")
    tenant = tenant or fixture["tenant"]
    with sync_channel(serving_target, token) as serving_channel, sync_channel(memory_target, token) as memory_channel:
        serving = serving_service_pb2_grpc.ServingServiceStub(serving_channel)
        memory = memory_service_pb2_grpc.MemoryServiceStub(memory_channel)
        events = [
            serving.HandleRequest(handle_request_from_fixture(fixture, r, tenant=tenant), timeout=10).event_id
            for r in fixture["requests"]
        ]
        deadline = time.monotonic() + timeout
        while not all(
            memory.GetProcessedEvent(
                memory_service_pb2.GetProcessedEventRequest(tenant=tenant, event_id=e), timeout=10
            ).processed
            for e in events
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"Alice's review mails were not learned within {timeout:g} s")
            time.sleep(0.2)
        pending = memory.ListReviewItems(
            memory_service_pb2.ListReviewItemsRequest(
                tenant=tenant, user=fixture["user"], state=memory_service_pb2.REVIEW_STATE_PENDING, page_size=500
            ),
            timeout=10,
        )
        return [item for item in pending.review_items if item.decision.candidate.event_id in events]
