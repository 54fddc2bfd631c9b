"""The outbox payload's wire form: a serialized `memloop.v1.LearningEvent` (the contract with the worker)."""

from __future__ import annotations

from services.common.gen.memloop.v1 import learning_event_pb2
from services.serving.domain.model import LearningEventRecord
from services.serving.domain.sender import AuthResult, OwnerClaim, SenderAuthentication

AUTH_RESULT_TO_PB = {
    AuthResult.UNSPECIFIED: learning_event_pb2.AUTHENTICATION_RESULT_UNSPECIFIED,
    AuthResult.PASS: learning_event_pb2.AUTHENTICATION_RESULT_PASS,
    AuthResult.FAIL: learning_event_pb2.AUTHENTICATION_RESULT_FAIL,
    AuthResult.SOFTFAIL: learning_event_pb2.AUTHENTICATION_RESULT_SOFTFAIL,
    AuthResult.NEUTRAL: learning_event_pb2.AUTHENTICATION_RESULT_NEUTRAL,
    AuthResult.NONE: learning_event_pb2.AUTHENTICATION_RESULT_NONE,
    AuthResult.TEMPERROR: learning_event_pb2.AUTHENTICATION_RESULT_TEMPERROR,
    AuthResult.PERMERROR: learning_event_pb2.AUTHENTICATION_RESULT_PERMERROR,
    AuthResult.POLICY: learning_event_pb2.AUTHENTICATION_RESULT_POLICY,
}
AUTH_RESULT_FROM_PB = {pb: result for result, pb in AUTH_RESULT_TO_PB.items()}
OWNER_CLAIM_TO_PB = {
    OwnerClaim.NOT_OWNER: learning_event_pb2.OWNER_CLAIM_NOT_OWNER,
    OwnerClaim.VERIFIED: learning_event_pb2.OWNER_CLAIM_VERIFIED,
    OwnerClaim.UNVERIFIED: learning_event_pb2.OWNER_CLAIM_UNVERIFIED,
}


def sender_to_pb(auth: SenderAuthentication) -> learning_event_pb2.SenderAuthentication:
    """The verdict as results only: neither the raw header nor the signing domain leaves serving.

    Both name who wrote the mail (hosts, domains); the event, the stream and memory's audit outlive
    a forgotten user's content, so they keep only what was verified, never whom it was about.
    """
    return learning_event_pb2.SenderAuthentication(
        dmarc=AUTH_RESULT_TO_PB[auth.dmarc], dkim=AUTH_RESULT_TO_PB[auth.dkim], spf=AUTH_RESULT_TO_PB[auth.spf]
    )


def encode_event(event: LearningEventRecord) -> bytes:
    """References and routing only: nothing in a LearningEvent can carry the body or attachments."""
    message = learning_event_pb2.LearningEvent(
        event_id=event.event_id,
        trace_id=event.trace_id,
        request_id=event.request_id,
        tenant=event.tenant,
        user=event.user,
        thread=event.thread,
        route=event.route,
        procedure_versions=event.procedure_versions,
        tool_outcomes=[
            learning_event_pb2.ToolOutcome(tool=o.tool, status=o.status, ref=o.ref, summary=o.summary)
            for o in event.tool_outcomes
        ],
        feedback_ref=event.feedback_ref,
        content_ref=event.content_ref,
        owner_address=event.owner_address,
        sender_authentication=sender_to_pb(event.sender_authentication),
        owner_claim=OWNER_CLAIM_TO_PB[event.owner_claim],
        owner_claim_reason=event.owner_claim_reason,
        redacted_by=event.redacted_by,
    )
    message.commit_time.FromDatetime(event.commit_time)
    return message.SerializeToString(deterministic=True)


def without_summaries(payload: bytes) -> bytes:
    """The same event with every tool outcome's summary blanked (a forgotten request keeps its ids)."""
    message = learning_event_pb2.LearningEvent.FromString(payload)
    for outcome in message.tool_outcomes:
        outcome.summary = ""
    return message.SerializeToString(deterministic=True)
