"""Contradictions a job will not decide, offered to a reviewer once each.

Ties are found again on every run (nothing about them changes until someone decides), so the
items are keyed by (tenant, user, slot, the ids involved) and an item that exists in any state is
never created again: a reviewer sees each contradiction once, and a denial is not re-asked.
"""

from __future__ import annotations

import hashlib
import uuid

from services.common.vocabulary import Candidate, Decision, Origin, Outcome, Reason, Sensitivity
from services.memory.consolidation.domain.consolidation import Contradiction, Snapshot, WriteBackPlan
from services.memory.consolidation.service.ports import ConsolidationJob, ConsolidationUnitOfWork
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.model import MemoryRecord
from services.memory.core.domain.review import ReviewItem, ReviewState
from services.memory.core.service.ports import CandidateRecord, Transition

CONTRADICTION = "CONSOLIDATION_CONTRADICTION"
REVIEW_POLICY = "consolidation"


def send_to_review(
    uow: ConsolidationUnitOfWork, job: ConsolidationJob, plan: WriteBackPlan, snapshot: Snapshot, by: Transition
) -> list[str]:
    """One review item per contender of each contradiction not already in review.

    The review queue holds candidates, and approval stores its candidate through the ordinary
    storing path; so each contender is offered as a fresh restatement of itself. Approving one
    makes it the newest claim of the slot, and the next job retires the others as corrected by it
    (newer wins) — the reviewer's choice is applied by the same rule as every other correction.
    """
    records = {m.memory_id: m for m in snapshot.memories} | {v.record.memory_id: v.record for v in plan.new_versions}
    offers = [
        (f"{_review_key(job, contradiction)}:{index}", memory_id, contradiction)
        for contradiction in plan.to_review
        for index, memory_id in enumerate(contradiction.memory_ids)
    ]
    # One question for the whole plan, not one per contender: a large user's job has thousands.
    offered = set(uow.consolidation.existing_review_keys(job.user, [key for key, _, _ in offers]))
    created: list[str] = []
    for key, memory_id, contradiction in offers:
        record = records.get(memory_id)
        if record is None or key in offered:
            continue
        offered.add(key)  # the same contradiction listed twice in one plan is offered once
        created.append(_review_item(uow, job, record, key, contradiction, len(created), by))
    return created


def _review_key(job: ConsolidationJob, contradiction: Contradiction) -> str:
    material = "\x1f".join((job.tenant, job.user, contradiction.slot, *sorted(contradiction.memory_ids)))
    return f"consolidation:{hashlib.sha256(material.encode()).hexdigest()[:32]}"


def _review_item(
    uow: ConsolidationUnitOfWork,
    job: ConsolidationJob,
    record: MemoryRecord,
    key: str,
    contradiction: Contradiction,
    ordinal: int,
    by: Transition,
) -> str:
    others = [i for i in contradiction.memory_ids if i != record.memory_id]
    reason = Reason(
        CONTRADICTION,
        f"memory {record.memory_id} and {', '.join(others)} set '{contradiction.slot}' at the same time; "
        "approve to make this one the current value",
    )
    candidate = Candidate(
        candidate_key=key,
        type=record.type,
        origin=Origin.CONSOLIDATION,
        sensitivity=Sensitivity.NORMAL,
        confidence=record.confidence,
        text=record.text,
        event_id=job.job_id,
        trace_id=by.trace_id,
        intent_key=record.intent_key,
    )
    decision = Decision(candidate, Outcome.REVIEW, REVIEW_POLICY, (reason,))
    candidate_id, review_item_id = uuid.uuid4().hex, uuid.uuid4().hex
    uow.candidates.add(CandidateRecord(candidate_id, job.user, ordinal, decision))
    uow.reviews.add(
        ReviewItem(
            review_item_id=review_item_id,
            tenant=job.tenant,
            user=job.user,
            decision=decision,
            state=ReviewState.PENDING,
            event_id=job.job_id,
            trace_id=by.trace_id,
            candidate_id=candidate_id,
            created_at=by.now,
        )
    )
    detail = {**by.extra, "candidate_id": candidate_id, "review_item_id": review_item_id}
    detail["reason_codes"] = [CONTRADICTION]
    uow.audit.add(AuditEntry(AuditAction.REVIEW_CREATED, by.event_id, by.trace_id, by.actor, record.memory_id, detail))
    return review_item_id
