"""The one path by which a memory becomes active: ApplyLearning STOREs, review approvals and
explicit supersessions all go through `store_candidate` / `supersede_with`, inside the caller's
unit of work, so the one-active rule, provenance and audit are written the same way every time.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from services.common.vocabulary import Decision, MemoryType, Origin, Sensitivity
from services.memory.core.domain.audit import AuditAction
from services.memory.core.domain.model import (
    MemoryRecord,
    MemoryStatus,
    StoreAction,
    StorePlan,
    plan_store,
    superseded,
)
from services.memory.core.service.audit import record_transition
from services.memory.core.service.ports import MemoryUnitOfWork, Transition, Vector


@dataclass(frozen=True)
class NewMemory:
    """What a memory will hold, before it has an id."""

    tenant: str
    user: str
    type: MemoryType
    text: str
    intent_key: str
    confidence: float
    origin: Origin
    sensitivity: Sensitivity
    candidate_key: str
    policy_version: str

    @classmethod
    def from_decision(cls, tenant: str, user: str, decision: Decision) -> NewMemory:
        """A decision's candidate as stored: one mapping for ApplyLearning and review approvals alike."""
        candidate = decision.candidate
        return cls(
            tenant=tenant,
            user=user,
            type=candidate.type,
            text=candidate.text,
            intent_key=candidate.intent_key,
            confidence=candidate.confidence,
            origin=candidate.origin,
            sensitivity=candidate.sensitivity,
            candidate_key=candidate.candidate_key,
            policy_version=decision.policy_version,
        )


@dataclass(frozen=True)
class StoreResult:
    memory: MemoryRecord
    action: StoreAction
    superseded: MemoryRecord | None = None


def store_candidate(
    uow: MemoryUnitOfWork, new: NewMemory, vector: Vector, *, embedder: str, by: Transition
) -> StoreResult:
    """Make `new` active: reuse the same active meaning, else supersede the same active intent, else create.

    Candidates it meets are locked FOR UPDATE first, so two writers of one intent serialise; a
    writer that still loses (both found nothing and both insert) gets SupersessionConflict from
    the partial unique index and retries its whole unit of work.
    """
    same_meaning, same_intent = uow.memories.active_for_store(new.user, new.candidate_key, new.intent_key)
    plan = plan_store(same_meaning, same_intent)
    stated_at = by.observed_at or by.now
    if plan.action is StoreAction.SUPERSEDE and plan.existing is not None and plan.existing.stated_at > stated_at:
        return _insert_into_history(uow, new, vector, plan.existing, embedder=embedder, by=by)
    if plan.action is StoreAction.REUSE and plan.existing is not None:
        existing = plan.existing
        if uow.memories.add_source(existing.memory_id, by.event_id, by.trace_id):
            record_transition(uow.audit, AuditAction.MEMORY_REINFORCED, existing.memory_id, by, {})
        if stated_at > existing.stated_at:
            # The repeat is the owner's newest word on this intent: an older statement of another
            # meaning, learned later, must compare against this time, not the first statement's.
            uow.memories.restate(existing.memory_id, stated_at)
            existing = replace(existing, observed_at=stated_at)
        return StoreResult(existing, StoreAction.REUSE)
    return _write_new(uow, new, vector, plan, embedder=embedder, by=by)


def supersede_with(
    uow: MemoryUnitOfWork, old: MemoryRecord, new: NewMemory, vector: Vector, *, embedder: str, by: Transition
) -> StoreResult:
    """Replace a locked, active `old` by `new` (explicit supersession); raises MemoryNotActive otherwise."""
    return _write_new(uow, new, vector, StorePlan(StoreAction.SUPERSEDE, old), embedder=embedder, by=by)


def _write_new(
    uow: MemoryUnitOfWork, new: NewMemory, vector: Vector, plan: StorePlan, *, embedder: str, by: Transition
) -> StoreResult:
    memory_id = uuid.uuid4().hex
    old = plan.existing if plan.action is StoreAction.SUPERSEDE else None
    retired = None
    if old is not None:
        retired = superseded(old, by=memory_id, now=by.now)
        uow.memories.set_status(
            old.memory_id,
            MemoryStatus.SUPERSEDED,
            superseded_by=memory_id,
            event_id=by.event_id,
            trace_id=by.trace_id,
        )
    record = uow.memories.add(
        MemoryRecord(
            memory_id=memory_id,
            tenant=new.tenant,
            user=new.user,
            type=new.type,
            text=new.text,
            status=MemoryStatus.ACTIVE,
            confidence=new.confidence,
            origin=new.origin,
            candidate_key=new.candidate_key,
            trace_id=by.trace_id,
            policy_version=new.policy_version,
            created_at=by.now,
            updated_at=by.now,
            intent_key=new.intent_key,
            source_event_ids=(by.event_id,),
            supersedes=old.memory_id if old is not None else None,
            event_id=by.event_id,
            observed_at=by.observed_at or by.now,
        ),
        with_source=True,
    )
    uow.memories.add_vector(memory_id, embedder, vector)
    detail = {"type": new.type.value, "origin": new.origin.value, "policy_version": new.policy_version}
    if old is not None:
        detail["supersedes"] = old.memory_id
        record_transition(uow.audit, AuditAction.MEMORY_SUPERSEDED, old.memory_id, by, {"superseded_by": memory_id})
    record_transition(uow.audit, AuditAction.MEMORY_STORED, memory_id, by, detail)
    return StoreResult(record, plan.action, retired)


def _insert_into_history(
    uow: MemoryUnitOfWork, new: NewMemory, vector: Vector, active: MemoryRecord, *, embedder: str, by: Transition
) -> StoreResult:
    """A statement older than the active record of its intent arrived late (events are learned out
    of order): it must not win. It joins the lineage where its time puts it, already superseded,
    and the newer active record stays active. Only links move; no text is rewritten.
    """
    stated_at = by.observed_at or by.now
    successor, predecessor = active, None
    while successor.supersedes:
        predecessor = uow.memories.get(successor.supersedes, lock=True)
        if predecessor is None or predecessor.stated_at <= stated_at:
            break
        successor, predecessor = predecessor, None
    predecessor_id = successor.supersedes
    memory_id = uuid.uuid4().hex
    record = uow.memories.add(
        MemoryRecord(
            memory_id=memory_id,
            tenant=new.tenant,
            user=new.user,
            type=new.type,
            text=new.text,
            status=MemoryStatus.SUPERSEDED,
            confidence=new.confidence,
            origin=new.origin,
            candidate_key=new.candidate_key,
            trace_id=by.trace_id,
            policy_version=new.policy_version,
            created_at=by.now,
            updated_at=by.now,
            intent_key=new.intent_key,
            source_event_ids=(by.event_id,),
            supersedes=predecessor_id,
            superseded_by=successor.memory_id,
            event_id=by.event_id,
            observed_at=stated_at,
        ),
        with_source=True,
    )
    uow.memories.set_supersedes(successor.memory_id, memory_id)
    if predecessor is not None and predecessor.status is MemoryStatus.SUPERSEDED:
        uow.memories.set_status(
            predecessor.memory_id,
            MemoryStatus.SUPERSEDED,
            superseded_by=memory_id,
            event_id=by.event_id,
            trace_id=by.trace_id,
        )
    uow.memories.add_vector(memory_id, embedder, vector)
    detail = {"type": new.type.value, "origin": new.origin.value, "policy_version": new.policy_version}
    record_transition(uow.audit, AuditAction.MEMORY_STORED, memory_id, by, {**detail, "late_for": successor.memory_id})
    record_transition(uow.audit, AuditAction.MEMORY_SUPERSEDED, memory_id, by, {"superseded_by": successor.memory_id})
    return StoreResult(record, StoreAction.SUPERSEDE, None)
