"""The worker's words for memory's apply, in protobuf: one event's ApplyLearningRequest (an item of
a BatchApplyLearningRequest too), with the sender verdict back in the proto's enum words."""

from __future__ import annotations

from services.common import convert
from services.common.gen.memloop.v1 import learning_event_pb2, memory_service_pb2
from services.worker.service.model import ApplyRequest, SenderVerdict


def apply_request(tenant: str, item: ApplyRequest) -> memory_service_pb2.ApplyLearningRequest:
    request = memory_service_pb2.ApplyLearningRequest(
        event_id=item.event_id,
        trace_id=item.trace_id,
        tenant=tenant,
        user=item.user,
        decisions=[convert.decision_to_pb(d) for d in item.decisions],
    )
    if item.sender is not None:
        set_sender(request, item.sender)
    if item.event_time is not None:
        request.event_time.FromDatetime(item.event_time)
    return request


def set_sender(request: memory_service_pb2.ApplyLearningRequest, sender: SenderVerdict) -> None:
    """The verdict back into protobuf words, for memory's audit entry of the event."""
    results = learning_event_pb2.AuthenticationResult
    claims = learning_event_pb2.OwnerClaim

    def result(word: str) -> learning_event_pb2.AuthenticationResult.ValueType:
        return results.Value(f"AUTHENTICATION_RESULT_{(word or 'unspecified').upper()}")

    auth = request.sender_authentication
    auth.dmarc, auth.dkim, auth.spf = result(sender.dmarc), result(sender.dkim), result(sender.spf)
    auth.dkim_domain = sender.dkim_domain
    request.owner_claim = claims.Value(f"OWNER_CLAIM_{(sender.owner_claim or 'unspecified').upper()}")
    request.owner_claim_reason = sender.owner_claim_reason
