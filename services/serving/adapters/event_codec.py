"""The outbox payload's wire form: a serialized `memloop.v1.LearningEvent` (the contract with the worker)."""

from __future__ import annotations

from services.common.gen.memloop.v1 import learning_event_pb2
from services.serving.domain.model import LearningEventRecord


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
    )
    message.commit_time.FromDatetime(event.commit_time)
    return message.SerializeToString(deterministic=True)


def without_summaries(payload: bytes) -> bytes:
    """The same event with every tool outcome's summary blanked (a forgotten request keeps its ids)."""
    message = learning_event_pb2.LearningEvent.FromString(payload)
    for outcome in message.tool_outcomes:
        outcome.summary = ""
    return message.SerializeToString(deterministic=True)
