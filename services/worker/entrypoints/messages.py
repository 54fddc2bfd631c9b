"""Wire → worker: a JetStream message's payload as a validated `LearningEventView`.

Anything that cannot be a learning event is a `PermanentError("MALFORMED_EVENT")`, so the
consumer dead-letters it at once instead of retrying something that can never parse.
"""

from __future__ import annotations

from datetime import UTC

from google.protobuf.message import DecodeError

from services.common.gen.memloop.v1 import learning_event_pb2
from services.worker.domain.extraction import ToolOutcome
from services.worker.service.model import LearningEventView, PermanentError, SenderVerdict

MALFORMED_EVENT = "MALFORMED_EVENT"
_REQUIRED = ("event_id", "tenant", "user", "content_ref")


def parse_learning_event(data: bytes) -> LearningEventView:
    """Decode and check the fields the worker cannot do without; raise PermanentError otherwise."""
    try:
        event = learning_event_pb2.LearningEvent.FromString(data)
    except (DecodeError, ValueError):
        raise PermanentError(MALFORMED_EVENT, "payload is not a memloop.v1.LearningEvent") from None
    missing = [name for name in _REQUIRED if not getattr(event, name).strip()]
    if missing:
        raise PermanentError(MALFORMED_EVENT, "missing " + ",".join(missing))
    return LearningEventView(
        event_id=event.event_id,
        trace_id=event.trace_id,
        request_id=event.request_id,
        tenant=event.tenant,
        user=event.user,
        thread=event.thread,
        route=event.route,
        content_ref=event.content_ref,
        owner_address=event.owner_address,
        procedure_versions=tuple(sorted(event.procedure_versions.items())),
        tool_outcomes=tuple(
            ToolOutcome(tool=t.tool, status=t.status, ref=t.ref, summary=t.summary) for t in event.tool_outcomes
        ),
        feedback_ref=event.feedback_ref,
        commit_time=event.commit_time.ToDatetime(tzinfo=UTC) if event.HasField("commit_time") else None,
        sender=sender_verdict(event),
        redacted_by=event.redacted_by,
    )


def _word(name: str, prefix: str) -> str:
    return "" if name.endswith("_UNSPECIFIED") else name.removeprefix(prefix).lower()


def sender_verdict(event: learning_event_pb2.LearningEvent) -> SenderVerdict | None:
    """The event's verdict in plain words; None for an event written before verdicts existed."""
    if not event.HasField("sender_authentication") and not event.owner_claim:
        return None
    auth, result_name = event.sender_authentication, learning_event_pb2.AuthenticationResult.Name
    prefix = "AUTHENTICATION_RESULT_"
    return SenderVerdict(
        dmarc=_word(result_name(auth.dmarc), prefix),
        dkim=_word(result_name(auth.dkim), prefix),
        spf=_word(result_name(auth.spf), prefix),
        dkim_domain=auth.dkim_domain,
        owner_claim=_word(learning_event_pb2.OwnerClaim.Name(event.owner_claim), "OWNER_CLAIM_"),
        owner_claim_reason=event.owner_claim_reason,
    )
