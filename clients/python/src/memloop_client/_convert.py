"""Requests built from the client's arguments, and results read from responses: the one place that
knows both the protobuf messages and the dataclasses of `results`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from google.protobuf import timestamp_pb2

from memloop_client._gen.memloop.v1 import (
    candidate_pb2,
    learned_procedure_service_pb2,
    learning_event_pb2,
    memory_service_pb2,
    serving_service_pb2,
)
from memloop_client.errors import FieldViolation, InvalidArgument
from memloop_client.results import (
    Context,
    Deletion,
    DeletionStep,
    Email,
    Forgotten,
    Memory,
    Procedure,
    Provenance,
    RecordResult,
    ReviewItem,
    ToolOutcome,
)

_REVIEW_STATES = ("pending", "approved", "denied", "deleted")


def _name(enum: object, value: int, prefix: str) -> str:
    """`MEMORY_TYPE_PREFERENCE` → `preference`; an unknown number reads as its digits."""
    try:
        full: str = enum.Name(value)  # type: ignore[attr-defined]
    except ValueError:
        return str(value)
    return full.removeprefix(prefix).lower()


def _time(ts: timestamp_pb2.Timestamp, present: bool) -> datetime | None:
    if not present:
        return None
    return ts.ToDatetime(tzinfo=UTC)


def _local_invalid(field: str, description: str) -> InvalidArgument:
    """Bad input caught before any call, shaped exactly like the server's answer would be."""
    return InvalidArgument(
        f"{field}: {description}",
        code="INVALID_ARGUMENT",
        reason="INVALID_ARGUMENT",
        domain="client.memloop",
        violations=(FieldViolation(field, description),),
        attempts=0,
    )


def memory_types(types: Iterable[str]) -> list[candidate_pb2.MemoryType.ValueType]:
    """Lower-case type names to enum numbers; an unknown name is InvalidArgument on `types`."""
    numbers: list[candidate_pb2.MemoryType.ValueType] = []
    for name in types:
        full = f"MEMORY_TYPE_{name.strip().upper()}"
        names = candidate_pb2.MemoryType.keys()
        if full not in names or full == "MEMORY_TYPE_UNSPECIFIED":
            allowed = ", ".join(k.removeprefix("MEMORY_TYPE_").lower() for k in names[1:])
            raise _local_invalid("types", f"unknown memory type {name!r}; one of {allowed}")
        numbers.append(candidate_pb2.MemoryType.Value(full))
    return numbers


def handle_request(
    *,
    request_id: str,
    tenant: str,
    user: str,
    thread: str,
    route: str,
    reply: str,
    email: Email | None,
    procedure_versions: Mapping[str, str] | Context | None,
    tool_outcomes: Sequence[ToolOutcome],
    feedback_ref: str,
    owner_address: str,
) -> serving_service_pb2.HandleRequestRequest:
    versions = procedure_versions.procedure_versions if isinstance(procedure_versions, Context) else procedure_versions
    request = serving_service_pb2.HandleRequestRequest(
        request_id=request_id,
        tenant=tenant,
        user=user,
        thread=thread,
        route=route,
        procedure_versions=dict(versions or {}),
        tool_outcomes=[
            learning_event_pb2.ToolOutcome(tool=t.tool, status=t.status, ref=t.ref, summary=t.summary)
            for t in tool_outcomes
        ],
        feedback_ref=feedback_ref,
        reply=reply,
        owner_address=owner_address,
    )
    if email is not None:
        request.content.CopyFrom(
            serving_service_pb2.EmailContent(
                from_address=email.from_address, to_address=email.to_address, subject=email.subject, body=email.body
            )
        )
    return request


def record_result(request_id: str, response: serving_service_pb2.HandleRequestResponse, attempts: int) -> RecordResult:
    return RecordResult(
        request_id=request_id,
        result_id=response.result_id,
        event_id=response.event_id,
        trace_id=response.trace_id,
        content_ref=response.content_ref,
        reply=response.reply,
        replayed=response.replayed,
        commit_time=_time(response.commit_time, response.HasField("commit_time")),
        attempts=attempts,
    )


def memory(pb: memory_service_pb2.Memory, score: float = 0.0) -> Memory:
    return Memory(
        memory_id=pb.memory_id,
        user=pb.user,
        type=_name(candidate_pb2.MemoryType, pb.type, "MEMORY_TYPE_"),
        text=pb.text,
        intent_key=pb.intent_key,
        state=_name(memory_service_pb2.MemoryState, pb.state, "MEMORY_STATE_"),
        provenance=Provenance(
            source_event_ids=tuple(pb.source_event_ids),
            trace_id=pb.trace_id,
            policy_version=pb.policy_version,
            confidence=pb.confidence,
            origin=_name(candidate_pb2.Origin, pb.origin, "ORIGIN_"),
        ),
        supersedes=pb.supersedes,
        superseded_by=pb.superseded_by,
        score=score,
        create_time=_time(pb.create_time, pb.HasField("create_time")),
    )


def procedure(pb: learned_procedure_service_pb2.LearnedProcedure) -> Procedure:
    return Procedure(
        procedure_id=pb.procedure_id,
        intent_key=pb.intent_key,
        version=pb.version,
        title=pb.title,
        kind=_name(learned_procedure_service_pb2.ProcedureKind, pb.kind, "PROCEDURE_KIND_"),
        scope=pb.scope,
        trigger=pb.trigger,
        action=pb.action,
        rationale=pb.rationale,
    )


def context(response: memory_service_pb2.GetContextResponse) -> Context:
    return Context(
        memories=tuple(memory(hit.memory, hit.score) for hit in response.memories),
        procedures=tuple(procedure(p) for p in response.procedures),
        context_version=response.context_version,
        procedure_versions=dict(response.procedure_versions),
    )


def forget_request(
    *, tenant: str, memory_id: str, user: str, event_id: str, source_request_id: str, reason: str, request_id: str
) -> memory_service_pb2.ForgetRequest:
    """Exactly one target decides the scope (the contract's `target` oneof); none or several is
    InvalidArgument on `scope` before any call, since the wire could carry only the last one set."""
    targets = {
        "memory_id": memory_id,
        "user": user,
        "event_id": event_id,
        "source_request_id": source_request_id,
    }
    given = {name: value for name, value in targets.items() if value}
    if len(given) != 1:
        raise _local_invalid("scope", "name exactly one of memory_id, user, event_id or source_request_id")
    return memory_service_pb2.ForgetRequest(tenant=tenant, request_id=request_id, reason=reason, **given)


def forgotten(response: memory_service_pb2.ForgetResponse) -> Forgotten:
    return Forgotten(deletion_id=response.deletion_id, memories_affected=response.memories_affected)


def deletion(answer: memory_service_pb2.GetDeletionResponse) -> Deletion:
    response = answer.deletion
    return Deletion(
        deletion_id=response.deletion_id,
        scope=_name(memory_service_pb2.ForgetScope, response.scope, "FORGET_SCOPE_"),
        requested_by=response.requested_by,
        complete=response.complete,
        memories_affected=response.memories_affected,
        steps=tuple(
            DeletionStep(
                location=s.location,
                state=_name(memory_service_pb2.DeletionStepState, s.state, "DELETION_STEP_STATE_"),
                error=s.error,
                complete_time=_time(s.complete_time, s.HasField("complete_time")),
            )
            for s in response.steps
        ),
        create_time=_time(response.create_time, response.HasField("create_time")),
        complete_time=_time(response.complete_time, response.HasField("complete_time")),
    )


def review_state(state: str) -> int:
    """'' means every state; otherwise one of pending, approved, denied, deleted."""
    if not state:
        return memory_service_pb2.REVIEW_STATE_UNSPECIFIED
    if state not in _REVIEW_STATES:
        raise _local_invalid("state", f"unknown review state {state!r}; one of {', '.join(_REVIEW_STATES)}")
    return memory_service_pb2.ReviewState.Value(f"REVIEW_STATE_{state.upper()}")


def review_item(pb: memory_service_pb2.ReviewItem) -> ReviewItem:
    candidate = pb.decision.candidate
    return ReviewItem(
        review_item_id=pb.review_item_id,
        user=pb.user,
        state=_name(memory_service_pb2.ReviewState, pb.state, "REVIEW_STATE_"),
        type=_name(candidate_pb2.MemoryType, candidate.type, "MEMORY_TYPE_"),
        text=candidate.text,
        intent_key=candidate.intent_key,
        reasons=tuple(r.code for r in pb.decision.reasons),
        policy_version=pb.decision.policy_version,
        memory_id=pb.memory_id,
        create_time=_time(pb.create_time, pb.HasField("create_time")),
    )
