"""Protobuf ↔ serving domain, for the servicer only (the service layer never sees protobuf)."""

from __future__ import annotations

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from services.serving.adapters.event_codec import AUTH_RESULT_FROM_PB
from services.serving.domain.model import (
    Attachment,
    ContentRead,
    Email,
    HandleRequestCommand,
    OutboxState,
    OutboxStatus,
    StoredContent,
    StoredResult,
    ToolOutcome,
)
from services.serving.domain.sender import AuthResult, SenderAuthentication, parse_authentication_results

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
        sender_authentication=to_sender_authentication(request),
    )


_HEADER_MAX_CHARS = 8 * 1024
_DOMAIN_MAX_CHARS = 253


def to_sender_authentication(request: serving_service_pb2.HandleRequestRequest) -> SenderAuthentication:
    """The verdict's results, or, when none is given, those parsed from the raw header. Bad values: INVALID_ARGUMENT."""
    pb = request.sender_authentication
    results: list[AuthResult] = []
    for name in ("dmarc", "dkim", "spf"):
        value = getattr(pb, name)
        if value not in AUTH_RESULT_FROM_PB:
            raise InvalidArgument(f"sender_authentication.{name}", f"unknown authentication result {value}")
        results.append(AUTH_RESULT_FROM_PB[value])
    if len(pb.authentication_results) > _HEADER_MAX_CHARS:
        raise InvalidArgument(
            "sender_authentication.authentication_results", f"longer than {_HEADER_MAX_CHARS} characters"
        )
    if len(pb.dkim_domain) > _DOMAIN_MAX_CHARS:
        raise InvalidArgument("sender_authentication.dkim_domain", f"longer than {_DOMAIN_MAX_CHARS} characters")
    if all(r is AuthResult.UNSPECIFIED for r in results) and pb.authentication_results:
        return parse_authentication_results(pb.authentication_results)
    dmarc, dkim, spf = results
    return SenderAuthentication(dmarc=dmarc, dkim=dkim, spf=spf, dkim_domain=pb.dkim_domain.lower())


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


def to_batch_read_response(reads: list[ContentRead]) -> serving_service_pb2.BatchReadContentResponse:
    return serving_service_pb2.BatchReadContentResponse(
        results=[
            serving_service_pb2.ReadContentResult(
                content_ref=read.content_ref,
                content=to_read_response(read.content) if read.content is not None else None,
                error_reason=read.error_reason,
            )
            for read in reads
        ]
    )
