"""Protobuf <-> vocabulary conversion for the messages several services exchange.

Enum mapping lives here once; an UNSPECIFIED value on the wire is rejected as invalid input
naming the field, never silently defaulted.
"""

from __future__ import annotations

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import candidate_pb2 as pb
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Reason, Sensitivity

_TYPES = {
    MemoryType.EPISODE: pb.MEMORY_TYPE_EPISODE,
    MemoryType.PREFERENCE: pb.MEMORY_TYPE_PREFERENCE,
    MemoryType.FACT: pb.MEMORY_TYPE_FACT,
    MemoryType.PROCEDURAL: pb.MEMORY_TYPE_PROCEDURAL,
}
_ORIGINS = {
    Origin.TOOL_OUTCOME: pb.ORIGIN_TOOL_OUTCOME,
    Origin.OWNER: pb.ORIGIN_OWNER,
    Origin.EXTERNAL_EMAIL: pb.ORIGIN_EXTERNAL_EMAIL,
    Origin.OPERATOR: pb.ORIGIN_OPERATOR,
    Origin.CONSOLIDATION: pb.ORIGIN_CONSOLIDATION,
}
_SENSITIVITIES = {
    Sensitivity.NORMAL: pb.SENSITIVITY_NORMAL,
    Sensitivity.PERSONAL: pb.SENSITIVITY_PERSONAL,
    Sensitivity.RESTRICTED: pb.SENSITIVITY_RESTRICTED,
    Sensitivity.SECRET: pb.SENSITIVITY_SECRET,
}
_OUTCOMES = {
    Outcome.STORE: pb.DECISION_OUTCOME_STORE,
    Outcome.REVIEW: pb.DECISION_OUTCOME_REVIEW,
    Outcome.REJECT: pb.DECISION_OUTCOME_REJECT,
}
_TYPES_BACK = {v: k for k, v in _TYPES.items()}
_ORIGINS_BACK = {v: k for k, v in _ORIGINS.items()}
_SENSITIVITIES_BACK = {v: k for k, v in _SENSITIVITIES.items()}
_OUTCOMES_BACK = {v: k for k, v in _OUTCOMES.items()}


def memory_type_to_pb(value: MemoryType) -> pb.MemoryType.ValueType:
    return _TYPES[value]


def memory_type_from_pb(value: int, field: str = "type") -> MemoryType:
    try:
        return _TYPES_BACK[value]  # type: ignore[index]
    except KeyError:
        raise InvalidArgument(field, "must be a known memory type") from None


def origin_to_pb(value: Origin) -> pb.Origin.ValueType:
    return _ORIGINS[value]


def origin_from_pb(value: int, field: str = "origin") -> Origin:
    try:
        return _ORIGINS_BACK[value]  # type: ignore[index]
    except KeyError:
        raise InvalidArgument(field, "must be a known origin") from None


def outcome_to_pb(value: Outcome) -> pb.DecisionOutcome.ValueType:
    return _OUTCOMES[value]


def outcome_from_pb(value: int, field: str = "outcome") -> Outcome:
    try:
        return _OUTCOMES_BACK[value]  # type: ignore[index]
    except KeyError:
        raise InvalidArgument(field, "must be STORE, REVIEW or REJECT") from None


def candidate_to_pb(candidate: Candidate) -> pb.Candidate:
    return pb.Candidate(
        candidate_key=candidate.candidate_key,
        type=_TYPES[candidate.type],
        origin=_ORIGINS[candidate.origin],
        sensitivity=_SENSITIVITIES[candidate.sensitivity],
        confidence=candidate.confidence,
        intent_key=candidate.intent_key,
        text=candidate.text,
        event_id=candidate.event_id,
        trace_id=candidate.trace_id,
        version=candidate.version,
    )


def candidate_from_pb(message: pb.Candidate, field: str = "candidate") -> Candidate:
    """Validate and convert; unspecified sensitivity is treated as restricted (fail closed)."""
    if not message.candidate_key:
        raise InvalidArgument(f"{field}.candidate_key", "is required")
    if not 0.0 <= message.confidence <= 1.0:
        raise InvalidArgument(f"{field}.confidence", "must be within [0, 1]")
    if message.version < 0:
        raise InvalidArgument(f"{field}.version", "must not be negative")
    return Candidate(
        candidate_key=message.candidate_key,
        type=memory_type_from_pb(message.type, f"{field}.type"),
        origin=origin_from_pb(message.origin, f"{field}.origin"),
        sensitivity=_SENSITIVITIES_BACK.get(message.sensitivity, Sensitivity.RESTRICTED),
        confidence=message.confidence,
        text=message.text,
        event_id=message.event_id,
        trace_id=message.trace_id,
        intent_key=message.intent_key,
        version=message.version or 1,
    )


def decision_to_pb(decision: Decision) -> pb.Decision:
    return pb.Decision(
        candidate=candidate_to_pb(decision.candidate),
        outcome=_OUTCOMES[decision.outcome],
        reasons=[pb.DecisionReason(code=r.code, message=r.message) for r in decision.reasons],
        policy_version=decision.policy_version,
        signature=decision.signature,
    )


def decision_from_pb(message: pb.Decision, field: str = "decision") -> Decision:
    if not message.policy_version:
        raise InvalidArgument(f"{field}.policy_version", "is required")
    return Decision(
        candidate=candidate_from_pb(message.candidate, f"{field}.candidate"),
        outcome=outcome_from_pb(message.outcome, f"{field}.outcome"),
        policy_version=message.policy_version,
        reasons=tuple(Reason(code=r.code, message=r.message) for r in message.reasons),
        signature=message.signature,
    )
