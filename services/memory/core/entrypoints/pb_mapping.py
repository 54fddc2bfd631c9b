"""Domain → protobuf for the memory service's responses (enums mapped here, once)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from services.common.convert import decision_to_pb, memory_type_to_pb, origin_to_pb, outcome_to_pb
from services.common.errors import InvalidArgument, MemloopError
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.grpc_errors import to_status
from services.memory.core.domain.audit import AuditEvent
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from services.memory.core.domain.outcome import ApplyOutcome
from services.memory.core.domain.review import Resolution, ReviewItem, ReviewState
from services.memory.core.service.retrieval import ScoredMemory

STATE_TO_PB = {
    MemoryStatus.ACTIVE: pb.MEMORY_STATE_ACTIVE,
    MemoryStatus.SUPERSEDED: pb.MEMORY_STATE_SUPERSEDED,
    MemoryStatus.DEPRECATED: pb.MEMORY_STATE_DEPRECATED,
    MemoryStatus.DELETED: pb.MEMORY_STATE_DELETED,
}
STATE_FROM_PB = {v: k for k, v in STATE_TO_PB.items()}
REVIEW_STATE_TO_PB = {
    ReviewState.PENDING: pb.REVIEW_STATE_PENDING,
    ReviewState.APPROVED: pb.REVIEW_STATE_APPROVED,
    ReviewState.DENIED: pb.REVIEW_STATE_DENIED,
    ReviewState.DELETED: pb.REVIEW_STATE_DELETED,
}
REVIEW_STATE_FROM_PB = {v: k for k, v in REVIEW_STATE_TO_PB.items()}
RESOLUTION_FROM_PB = {pb.REVIEW_RESOLUTION_APPROVE: Resolution.APPROVE, pb.REVIEW_RESOLUTION_DENY: Resolution.DENY}


def struct_of(detail: object) -> Struct:
    """Audit detail as a Struct; the JSON round trip turns tuples and other JSON-able values into lists and scalars."""
    return json_format.ParseDict(json.loads(json.dumps(detail)), Struct())


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp(value: datetime | None) -> Timestamp | None:
    """`Timestamp.FromDatetime`'s value (a naive datetime is UTC), by integer arithmetic on the
    difference from the epoch: FromDatetime goes through `utctimetuple` and `calendar.timegm` in
    Python, about half of mapping a search's 10 memories (two timestamps each) to protobuf."""
    if value is None:
        return None
    since = (value if value.tzinfo is not None else value.replace(tzinfo=UTC)) - _EPOCH
    return Timestamp(seconds=since.days * 86_400 + since.seconds, nanos=since.microseconds * 1000)


def memory_to_pb(record: MemoryRecord) -> pb.Memory:
    return pb.Memory(
        memory_id=record.memory_id,
        tenant=record.tenant,
        user=record.user,
        type=memory_type_to_pb(record.type),
        text=record.text,
        intent_key=record.intent_key,
        state=STATE_TO_PB[record.status],
        supersedes=record.supersedes or "",
        superseded_by=record.superseded_by or "",
        confidence=record.confidence,
        origin=origin_to_pb(record.origin),
        source_event_ids=list(record.source_event_ids),
        trace_id=record.trace_id,
        policy_version=record.policy_version,
        candidate_key=record.candidate_key,
        create_time=timestamp(record.created_at),
        update_time=timestamp(record.updated_at),
    )


def item_result_to_pb(event_id: str, result: ApplyOutcome | MemloopError, *, domain: str) -> pb.ApplyLearningResult:
    """One event of a batch: its outcome, or its refusal as the status ApplyLearning would have
    failed with (code, ErrorInfo reason, bounded message, BadRequest fields)."""
    if isinstance(result, ApplyOutcome):
        return pb.ApplyLearningResult(event_id=event_id, outcome=outcome_to_response(result))
    status = to_status(result, domain=domain)
    fields = [v.field for v in result.violations] if isinstance(result, InvalidArgument) else []
    return pb.ApplyLearningResult(
        event_id=event_id,
        error=pb.ApplyLearningError(code=status.code, reason=result.reason, message=status.message, fields=fields),
    )


def outcome_to_response(outcome: ApplyOutcome) -> pb.ApplyLearningResponse:
    return pb.ApplyLearningResponse(
        event_id=outcome.event_id,
        already_processed=outcome.already_processed,
        applied=[
            pb.AppliedDecision(
                candidate_key=a.candidate_key,
                outcome=outcome_to_pb(a.outcome),
                memory_id=a.memory_id,
                superseded_memory_id=a.superseded_memory_id,
                review_item_id=a.review_item_id,
            )
            for a in outcome.applied
        ],
    )


def scored_to_pb(hit: ScoredMemory) -> pb.ScoredMemory:
    return pb.ScoredMemory(memory=memory_to_pb(hit.memory), score=hit.score)


def review_item_to_pb(item: ReviewItem) -> pb.ReviewItem:
    return pb.ReviewItem(
        review_item_id=item.review_item_id,
        tenant=item.tenant,
        user=item.user,
        decision=decision_to_pb(item.decision),
        state=REVIEW_STATE_TO_PB[item.state],
        reviewer=item.reviewer,
        resolution_reason=item.resolution_reason,
        memory_id=item.memory_id,
        create_time=timestamp(item.created_at),
        resolve_time=timestamp(item.resolved_at),
    )


def audit_event_to_pb(event: AuditEvent) -> pb.AuditEvent:
    return pb.AuditEvent(
        audit_id=event.audit_id,
        tenant=event.tenant,
        action=event.action,
        event_id=event.event_id,
        trace_id=event.trace_id,
        memory_id=event.memory_id,
        actor=event.actor,
        detail=struct_of(event.detail),
        create_time=timestamp(event.created_at),
    )
