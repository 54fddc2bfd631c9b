"""Protobuf ↔ serving domain, for the servicer only (the service layer never sees protobuf)."""

from __future__ import annotations

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from services.serving.domain.model import (
    Attachment,
    Email,
    HandleRequestCommand,
    OutboxState,
    OutboxStatus,
    StoredContent,
    StoredResult,
    ToolOutcome,
)

_OUTBOX_STATES = {
    OutboxState.PENDING: serving_service_pb2.OUTBOX_STATE_PENDING,
    OutboxState.PUBLISHED: serving_service_pb2.OUTBOX_STATE_PUBLISHED,
}


def to_command(
    request: serving_service_pb2.HandleRequestRequest, *, trace_id: str, span_id: str
) -> HandleRequestCommand:
    content = request.content
    return HandleRequestCommand(
        request_id=request.request_id,
        tenant=request.tenant,
        user=request.user,
        thread=request.thread,
        route=request.route,
        procedure_versions=dict(request.procedure_versions),
        tool_outcomes=tuple(ToolOutcome(o.tool, o.status, o.ref, o.summary) for o in request.tool_outcomes),
        feedback_ref=request.feedback_ref,
        content=Email(content.from_address, content.to_address, content.subject, content.body),
        attachments=tuple(Attachment(a.filename, a.media_type, a.data) for a in content.attachments),
        reply=request.reply,
        owner_address=request.owner_address,
        trace_id=trace_id,
        span_id=span_id,
    )


def to_handle_response(result: StoredResult) -> serving_service_pb2.HandleRequestResponse:
    response = serving_service_pb2.HandleRequestResponse(
        result_id=result.result_id,
        event_id=result.event_id,
        trace_id=result.trace_id,
        content_ref=result.content_ref,
        reply=result.reply,
        replayed=result.replayed,
    )
    response.commit_time.FromDatetime(result.commit_time)
    return response


def to_read_response(content: StoredContent) -> serving_service_pb2.ReadContentResponse:
    email = content.email
    return serving_service_pb2.ReadContentResponse(
        content_ref=content.content_ref,
        user=content.user,
        content=serving_service_pb2.EmailContent(
            from_address=email.from_address,
            to_address=email.to_address,
            subject=email.subject,
            body=email.body,
            attachments=[
                serving_service_pb2.Attachment(
                    filename=a.filename, media_type=a.media_type, size_bytes=a.size_bytes, sha256=a.sha256
                )
                for a in content.attachments
            ],
        ),
        from_owner=content.from_owner,
    )


def to_outbox_response(status: OutboxStatus) -> serving_service_pb2.GetOutboxEventResponse:
    response = serving_service_pb2.GetOutboxEventResponse(
        event=learning_event_pb2.LearningEvent.FromString(status.payload),
        state=_OUTBOX_STATES[status.state],
        stream_sequence=status.stream_sequence,
        duplicate=status.duplicate,
        publish_attempts=status.publish_attempts,
    )
    if status.published_at is not None:
        response.publish_time.FromDatetime(status.published_at)
    return response
