"""Protobuf requests → validated commands. Every check runs before any use case, so bad input is
INVALID_ARGUMENT naming the field and nothing is written."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC
from typing import Any

from services.common.convert import candidate_from_pb, decision_from_pb, memory_type_from_pb
from services.common.errors import FieldViolation, InvalidArgument, require
from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.hidden_text import hidden_text
from services.common.telemetry import current_trace_id
from services.common.vocabulary import Candidate, Decision, MemoryType, Outcome
from services.memory.core.domain.model import MemoryStatus
from services.memory.core.domain.review import Resolution, ReviewState
from services.memory.core.entrypoints.operator_text import kept
from services.memory.core.entrypoints.pb_mapping import RESOLUTION_FROM_PB, REVIEW_STATE_FROM_PB, STATE_FROM_PB
from services.memory.core.service.apply_learning import ApplyLearning
from services.memory.core.service.lifecycle import DeprecateMemory, SupersedeMemory
from services.memory.core.service.ports import MemoryFilter
from services.memory.core.service.retrieval import SearchMemories
from services.memory.core.service.review import ResolveReviewItem

MAX_TEXT = 4000
MAX_QUERY = 2000
MAX_REASON = 1000
_TENANT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INTENT = re.compile(r"^[a-z0-9_.:-]{0,128}$")


def tenant_of(value: str) -> str:
    """Tenants appear in NATS subjects, so they are restricted to subject-safe characters."""
    require(value, "tenant", max_length=64)
    if not _TENANT.match(value):
        raise InvalidArgument("tenant", "may contain only letters, digits, '_' and '-'")
    return value


def text_of(value: str, field: str, *, max_length: int = MAX_TEXT) -> str:
    if not value.strip():
        raise InvalidArgument(field, "is required")
    if len(value) > max_length:
        raise InvalidArgument(field, f"must be at most {max_length} characters")
    return value


def shown_text_of(value: str, field: str) -> str:
    """Text a person writes as a memory: nothing in it may be hidden from the next reader (see
    `services.common.hidden_text`), as policy refuses for learned memories."""
    text = text_of(value, field)
    if (hidden := hidden_text(text)) is not None:
        raise InvalidArgument(field, f"holds text a reader cannot see ({hidden})")
    return text


def reason_of(value: str) -> str:
    """A caller's reason for a change; it is kept (audit, deletion records), so it is redacted."""
    if len(value) > MAX_REASON:
        raise InvalidArgument("reason", f"must be at most {MAX_REASON} characters")
    return kept(value)


def apply_learning(request: pb.ApplyLearningRequest, *, actor: str) -> ApplyLearning:
    tenant = tenant_of(request.tenant)
    event_id = require(request.event_id, "event_id")
    user = require(request.user, "user")
    decisions = tuple(_decision(d, f"decisions[{i}]", event_id) for i, d in enumerate(request.decisions))
    return ApplyLearning(
        tenant=tenant,
        user=user,
        event_id=event_id,
        trace_id=request.trace_id or current_trace_id(),
        actor=actor,
        decisions=decisions,
        event_time=request.event_time.ToDatetime(tzinfo=UTC) if request.HasField("event_time") else None,
        sender=_sender(request),
    )


def apply_learning_batch(
    request: pb.BatchApplyLearningRequest, *, actor: str
) -> tuple[str, list[ApplyLearning | InvalidArgument]]:
    """The batch's tenant and each item's command, or the item's own INVALID_ARGUMENT (its fields
    named `requests[i].…`), so a bad item fails alone and the others are applied."""
    tenant = tenant_of(request.tenant)
    items: list[ApplyLearning | InvalidArgument] = []
    for index, item in enumerate(request.requests):
        prefix = f"requests[{index}]"
        if item.tenant and item.tenant != tenant:
            items.append(InvalidArgument(f"{prefix}.tenant", "must be empty or equal to the batch's tenant"))
            continue
        scoped = pb.ApplyLearningRequest()
        scoped.CopyFrom(item)
        scoped.tenant = tenant
        try:
            items.append(apply_learning(scoped, actor=actor))
        except InvalidArgument as invalid:
            first, *more = (FieldViolation(f"{prefix}.{v.field}", v.description) for v in invalid.violations)
            items.append(InvalidArgument(first.field, first.description, *more))
    return tenant, items


def _sender(request: pb.ApplyLearningRequest) -> dict[str, str] | None:
    """The mail's sender-authentication verdict in plain words, for the event's audit entry."""
    if not request.HasField("sender_authentication") and not request.owner_claim:
        return None
    auth = request.sender_authentication
    if len(auth.dkim_domain) > 253:
        raise InvalidArgument("sender_authentication.dkim_domain", "must be at most 253 characters")
    # The worker writes this reason from redacted content: checked, not redacted again on the hot path.
    if len(request.owner_claim_reason) > MAX_REASON:
        raise InvalidArgument("owner_claim_reason", f"must be at most {MAX_REASON} characters")
    reason = request.owner_claim_reason

    def word(enum: Any, value: int, prefix: str, field: str) -> str:
        if value not in enum.values():
            raise InvalidArgument(field, f"unknown value {value}")
        name: str = enum.Name(value)
        return "" if name.endswith("_UNSPECIFIED") else name.removeprefix(prefix).lower()

    results, claims = learning_event_pb2.AuthenticationResult, learning_event_pb2.OwnerClaim
    return {
        "dmarc": word(results, auth.dmarc, "AUTHENTICATION_RESULT_", "sender_authentication.dmarc"),
        "dkim": word(results, auth.dkim, "AUTHENTICATION_RESULT_", "sender_authentication.dkim"),
        "spf": word(results, auth.spf, "AUTHENTICATION_RESULT_", "sender_authentication.spf"),
        "owner_claim": word(claims, request.owner_claim, "OWNER_CLAIM_", "owner_claim"),
        "owner_claim_reason": reason,
    }


def _decision(message: object, field: str, event_id: str) -> Decision:
    decision = decision_from_pb(message, field)  # type: ignore[arg-type]
    _check_candidate(decision.candidate, f"{field}.candidate", event_id)
    if decision.outcome is not Outcome.REJECT:
        text_of(decision.candidate.text, f"{field}.candidate.text")
    elif len(decision.candidate.text) > MAX_TEXT:
        raise InvalidArgument(f"{field}.candidate.text", f"must be at most {MAX_TEXT} characters")
    return decision


def _check_candidate(candidate: Candidate, field: str, event_id: str) -> None:
    require(candidate.candidate_key, f"{field}.candidate_key", max_length=128)
    if not _INTENT.match(candidate.intent_key):
        raise InvalidArgument(f"{field}.intent_key", "must be lower-case [a-z0-9_.:-], at most 128 characters")
    if candidate.event_id and candidate.event_id != event_id:
        raise InvalidArgument(f"{field}.event_id", "must be empty or equal to the request's event_id")


def candidates(request: pb.FindConflictsRequest) -> list[Candidate]:
    found = []
    for i, message in enumerate(request.candidates):
        candidate = candidate_from_pb(message, f"candidates[{i}]")
        _check_candidate(candidate, f"candidates[{i}]", candidate.event_id)
        text_of(candidate.text, f"candidates[{i}].text")
        found.append(candidate)
    return found


def find_conflicts_batch(request: pb.BatchFindConflictsRequest) -> tuple[str, list[tuple[str, list[Candidate]]]]:
    """The batch's tenant and each request's (user, candidates); a bad request fails the whole call,
    its fields named `requests[i].…` (nothing is written, so the caller may retry them one by one)."""
    tenant = tenant_of(request.tenant)
    items: list[tuple[str, list[Candidate]]] = []
    for index, item in enumerate(request.requests):
        prefix = f"requests[{index}]"
        if item.tenant and item.tenant != tenant:
            raise InvalidArgument(f"{prefix}.tenant", "must be empty or equal to the batch's tenant")
        try:
            items.append((require(item.user, "user"), candidates(item)))
        except InvalidArgument as invalid:
            first, *more = (FieldViolation(f"{prefix}.{v.field}", v.description) for v in invalid.violations)
            raise InvalidArgument(first.field, first.description, *more) from None
    return tenant, items


def types_of(values: Iterable[int]) -> frozenset[MemoryType]:
    return frozenset(memory_type_from_pb(v, f"types[{i}]") for i, v in enumerate(values))


def search(request: pb.SearchMemoriesRequest, *, default_k: int, max_k: int) -> SearchMemories:
    if request.k < 0:
        raise InvalidArgument("k", "must not be negative")
    return SearchMemories(
        tenant=tenant_of(request.tenant),
        user=require(request.user, "user"),
        query=text_of(request.query, "query", max_length=MAX_QUERY),
        k=min(request.k or default_k, max_k),
        types=types_of(request.types),
    )


def memory_filter(request: pb.ListMemoriesRequest) -> MemoryFilter:
    statuses: set[MemoryStatus] = set()
    for i, value in enumerate(request.states):
        status = STATE_FROM_PB.get(pb.MemoryState.ValueType(value))
        if status is None:
            raise InvalidArgument(f"states[{i}]", "must be a known memory state")
        statuses.add(status)
    if request.intent_key and not _INTENT.match(request.intent_key):
        raise InvalidArgument("intent_key", "must be lower-case [a-z0-9_.:-], at most 128 characters")
    return MemoryFilter(
        user=request.user,
        statuses=frozenset(statuses),
        types=types_of(request.types),
        intent_key=request.intent_key,
        source_event_id=request.source_event_id,
    )


def supersede(request: pb.SupersedeMemoryRequest, *, actor: str) -> SupersedeMemory:
    return SupersedeMemory(
        tenant=tenant_of(request.tenant),
        memory_id=require(request.memory_id, "memory_id"),
        text=kept(shown_text_of(request.text, "text")),
        request_id=require(request.request_id, "request_id"),
        reason=reason_of(request.reason),
        actor=actor,
        trace_id=current_trace_id(),
    )


def deprecate(request: pb.DeprecateMemoryRequest, *, actor: str) -> DeprecateMemory:
    return DeprecateMemory(
        tenant=tenant_of(request.tenant),
        memory_id=require(request.memory_id, "memory_id"),
        reason=reason_of(request.reason),
        actor=actor,
        trace_id=current_trace_id(),
    )


def review_state(value: int) -> ReviewState | None:
    if value == pb.REVIEW_STATE_UNSPECIFIED:
        return None
    state = REVIEW_STATE_FROM_PB.get(pb.ReviewState.ValueType(value))
    if state is None:
        raise InvalidArgument("state", "must be a known review state")
    return state


def resolve(request: pb.ResolveReviewItemRequest, *, reviewer: str) -> ResolveReviewItem:
    resolution: Resolution | None = RESOLUTION_FROM_PB.get(request.resolution)
    if resolution is None:
        raise InvalidArgument("resolution", "must be APPROVE or DENY")
    return ResolveReviewItem(
        tenant=tenant_of(request.tenant),
        review_item_id=require(request.review_item_id, "review_item_id"),
        resolution=resolution,
        reason=reason_of(request.reason),
        reviewer=reviewer,
        trace_id=current_trace_id(),
    )
