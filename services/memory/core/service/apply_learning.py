"""ApplyLearning: every decision of one learning event, in one transaction, exactly once.

The event is claimed under a transaction-scoped lock on its id, so concurrent deliveries of one
event serialise: the first applies and records the outcome last; every later one finds the
outcome and returns it unchanged, having written nothing.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from services.common.vocabulary import Decision, Outcome
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.outcome import AppliedDecision, ApplyOutcome, tombstone_outcome
from services.memory.core.domain.review import ReviewItem, ReviewState
from services.memory.core.service.decision_gate import admit
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.ports import CandidateRecord, MemoryUnitOfWork, Transition, Vector
from services.memory.core.service.retry import retry_on_conflict
from services.memory.core.service.storing import NewMemory, store_candidate


@dataclass(frozen=True)
class ApplyLearning:
    """The command: validated decisions of one event for one tenant's user."""

    tenant: str
    user: str
    event_id: str
    trace_id: str
    actor: str
    decisions: tuple[Decision, ...]
    event_time: datetime | None = None
    # The mail's sender-authentication verdict and owner claim, kept in the event's audit entry.
    sender: Mapping[str, str] | None = None


@dataclass
class _Written:
    memory_ids: list[str] = field(default_factory=list)
    review_items: list[str] = field(default_factory=list)


def apply_learning(cmd: ApplyLearning, ports: MemoryPorts) -> ApplyOutcome:
    """Apply or replay; returns the stored outcome with `already_processed` set on a replay.

    Raises DecisionNotSigned or HardRuleViolated (PERMISSION_DENIED), before any read or write,
    for a decision policy did not sign or one that would store what memory never stores.
    """
    admitted = admit(cmd.decisions, ports.decisions, tenant=cmd.tenant, user=cmd.user, event_id=cmd.event_id)
    cmd = replace(cmd, decisions=tuple(_stamped(d, cmd) for d in admitted))
    stored = _stored_outcome(cmd, ports)
    if stored is not None:
        ports.metrics.event_repeated()
        return stored
    vectors = _embed_stores(cmd, ports)
    outcome, written = retry_on_conflict(
        ports.tuning.apply_attempts, ports.metrics, lambda: _apply_once(cmd, ports, vectors)
    )
    if outcome.already_processed:
        ports.metrics.event_repeated()
        return outcome
    for applied in outcome.applied:
        ports.metrics.decision_applied(applied.outcome.value)
    if written.memory_ids:
        ports.effects.memories_changed(cmd.tenant, [cmd.user], written.memory_ids)
    for review_item_id in written.review_items:
        ports.effects.review_created(cmd.tenant, cmd.user, review_item_id, cmd.event_id)
    return outcome


def _stored_outcome(cmd: ApplyLearning, ports: MemoryPorts) -> ApplyOutcome | None:
    with ports.uow(cmd.tenant) as uow:
        found = uow.events.get(cmd.event_id)
    return None if found is None else ApplyOutcome.from_json(found[0], already_processed=True)


def _embed_stores(cmd: ApplyLearning, ports: MemoryPorts) -> dict[str, Vector]:
    texts = sorted({d.candidate.text for d in cmd.decisions if d.outcome is Outcome.STORE})
    if not texts:
        return {}
    vectors = ports.embedder.embed(texts)
    ports.metrics.texts_embedded("document", len(texts))
    return {text: vectors[i] for i, text in enumerate(texts)}


def _apply_once(cmd: ApplyLearning, ports: MemoryPorts, vectors: dict[str, Vector]) -> tuple[ApplyOutcome, _Written]:
    written = _Written()
    with ports.uow(cmd.tenant) as uow:
        uow.lock(f"event:{cmd.event_id}")
        found = uow.events.get(cmd.event_id)
        if found is not None:
            return ApplyOutcome.from_json(found[0], already_processed=True), written
        uow.lock(f"user:{cmd.user}")  # Forget(user) takes it too: learning commits before its ack or not at all
        forgotten_by = uow.events.forgotten_by(cmd.user, cmd.event_time)
        if forgotten_by is not None:
            return _forgotten(uow, cmd, forgotten_by), written
        by = Transition(
            event_id=cmd.event_id,
            trace_id=cmd.trace_id,
            actor=cmd.actor,
            now=ports.clock(),
            observed_at=cmd.event_time,
        )
        applied = tuple(
            _apply_decision(uow, ports, cmd, ordinal, decision, vectors, by, written)
            for ordinal, decision in enumerate(cmd.decisions)
        )
        outcome = ApplyOutcome(event_id=cmd.event_id, applied=applied)
        uow.events.record(cmd.event_id, user=cmd.user, trace_id=cmd.trace_id, outcome=outcome.to_json())
        detail: dict[str, Any] = dict(Counter(a.outcome.value for a in applied))
        if cmd.sender is not None:
            detail["sender"] = dict(cmd.sender)
        uow.audit.add(AuditEntry(AuditAction.EVENT_PROCESSED, cmd.event_id, cmd.trace_id, cmd.actor, detail=detail))
        uow.commit()
    return outcome, written


def _forgotten(uow: MemoryUnitOfWork, cmd: ApplyLearning, deletion_id: str) -> ApplyOutcome:
    """The user asked to forget everything: the event is recorded as processed and nothing is learned."""
    uow.events.record(
        cmd.event_id, user=cmd.user, trace_id=cmd.trace_id, outcome=tombstone_outcome(cmd.event_id, deletion_id)
    )
    detail = {"forgotten_by": deletion_id}
    uow.audit.add(AuditEntry(AuditAction.EVENT_PROCESSED, cmd.event_id, cmd.trace_id, cmd.actor, detail=detail))
    uow.commit()
    return ApplyOutcome(event_id=cmd.event_id, applied=())


def _apply_decision(
    uow: MemoryUnitOfWork,
    ports: MemoryPorts,
    cmd: ApplyLearning,
    ordinal: int,
    decision: Decision,
    vectors: dict[str, Vector],
    by: Transition,
    written: _Written,
) -> AppliedDecision:
    candidate = decision.candidate
    candidate_id = uuid.uuid4().hex
    if decision.outcome is Outcome.STORE:
        result = store_candidate(
            uow,
            NewMemory.from_decision(cmd.tenant, cmd.user, decision),
            vectors[candidate.text],
            embedder=ports.embedder.name,
            by=by,
        )
        uow.candidates.add(CandidateRecord(candidate_id, cmd.user, ordinal, decision, result.memory.memory_id))
        written.memory_ids.append(result.memory.memory_id)
        if result.superseded is not None:
            written.memory_ids.append(result.superseded.memory_id)
        return AppliedDecision(
            candidate_key=candidate.candidate_key,
            outcome=Outcome.STORE,
            memory_id=result.memory.memory_id,
            superseded_memory_id=result.superseded.memory_id if result.superseded is not None else "",
        )
    uow.candidates.add(CandidateRecord(candidate_id, cmd.user, ordinal, decision))
    detail: dict[str, Any] = {
        "candidate_id": candidate_id,
        "policy_version": decision.policy_version,
        "reason_codes": [r.code for r in decision.reasons],
    }
    if decision.outcome is Outcome.REVIEW:
        review_item_id = uuid.uuid4().hex
        uow.reviews.add(
            ReviewItem(
                review_item_id=review_item_id,
                tenant=cmd.tenant,
                user=cmd.user,
                decision=decision,
                state=ReviewState.PENDING,
                event_id=cmd.event_id,
                trace_id=cmd.trace_id,
                candidate_id=candidate_id,
                created_at=by.now,
            )
        )
        detail["review_item_id"] = review_item_id
        uow.audit.add(AuditEntry(AuditAction.REVIEW_CREATED, by.event_id, by.trace_id, by.actor, detail=detail))
        written.review_items.append(review_item_id)
        return AppliedDecision(candidate.candidate_key, Outcome.REVIEW, review_item_id=review_item_id)
    uow.audit.add(AuditEntry(AuditAction.CANDIDATE_REJECTED, by.event_id, by.trace_id, by.actor, detail=detail))
    return AppliedDecision(candidate.candidate_key, Outcome.REJECT)


def _stamped(decision: Decision, cmd: ApplyLearning) -> Decision:
    """Candidates carry the event and trace that proposed them (the request's, when left empty)."""
    candidate = replace(
        decision.candidate,
        event_id=decision.candidate.event_id or cmd.event_id,
        trace_id=decision.candidate.trace_id or cmd.trace_id,
    )
    return replace(decision, candidate=candidate)
