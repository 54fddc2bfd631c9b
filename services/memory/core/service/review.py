"""Review: list held decisions and resolve them.

Approval stores the candidate through the same path as a STORE decision (so it supersedes the
active record of its intent atomically); denial only records the verdict. Both are audited with
the reviewer (the token's subject) and the reason, and both are idempotent for the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.errors import FailedPrecondition
from services.common.vocabulary import MemoryType, Outcome
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.errors import ReviewItemNotFound
from services.memory.core.domain.hard_rules import broken_rule
from services.memory.core.domain.review import Resolution, ReviewItem, ReviewState, needs_resolution, resolved
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.pagination import Page, PageRequest
from services.memory.core.service.ports import MemoryUnitOfWork, Transition, Vector
from services.memory.core.service.retry import retry_on_conflict
from services.memory.core.service.storing import NewMemory, store_candidate
from services.memory.procedures.service.procedures import save_from_learning


@dataclass(frozen=True)
class ResolveReviewItem:
    tenant: str
    review_item_id: str
    resolution: Resolution
    reason: str
    reviewer: str
    trace_id: str = ""


def resolve_review_item(cmd: ResolveReviewItem, ports: MemoryPorts) -> ReviewItem:
    item = _load(cmd.tenant, cmd.review_item_id, ports)
    if not needs_resolution(item, cmd.resolution):
        return item
    vector = None
    if cmd.resolution is Resolution.APPROVE:
        rule = broken_rule(item.decision.candidate, Outcome.STORE, approved_by_reviewer=True)
        if rule is not None:
            # The item stays pending; the reason names the rule (NEVER_SUPPRESS, EXTERNAL_PROCEDURAL, ...).
            raise FailedPrecondition(
                f"review item {item.review_item_id}: approving would break the hard rule {rule}", reason=rule
            )
        vector = ports.embedder.embed([item.decision.candidate.text], kind="document")[0]
    resolved_item, changed = retry_on_conflict(
        ports.tuning.apply_attempts, ports.metrics, lambda: _resolve_once(cmd, ports, vector)
    )
    if changed:
        ports.effects.memories_changed(cmd.tenant, [resolved_item.user], changed)
    return resolved_item


def _resolve_once(cmd: ResolveReviewItem, ports: MemoryPorts, vector: Vector | None) -> tuple[ReviewItem, list[str]]:
    with ports.uow(cmd.tenant) as uow:
        item = _get(uow, cmd.review_item_id, lock=True)
        if not needs_resolution(item, cmd.resolution):
            return item, []
        by = Transition(
            event_id=item.event_id,
            trace_id=cmd.trace_id or item.trace_id,
            actor=cmd.reviewer,
            now=ports.clock(),
            extra={"review_item_id": item.review_item_id, "reason": cmd.reason},
        )
        memory_id, changed = "", []
        if cmd.resolution is Resolution.APPROVE and vector is not None:
            new = NewMemory.from_decision(item.tenant, item.user, item.decision)
            result = store_candidate(uow, new, vector, embedder=ports.embedder.name, by=by)
            memory_id = result.memory.memory_id
            changed = [memory_id] + ([result.superseded.memory_id] if result.superseded else [])
            if item.decision.candidate.type is MemoryType.PROCEDURAL:
                save_from_learning(
                    uow,
                    item.decision.candidate,
                    tenant=item.tenant,
                    user=item.user,
                    review_item_id=item.review_item_id,
                    by=by,
                )
        after = resolved(
            item, cmd.resolution, reviewer=cmd.reviewer, reason=cmd.reason, memory_id=memory_id, now=by.now
        )
        uow.reviews.save_resolution(after, trace_id=by.trace_id)
        action = AuditAction.REVIEW_APPROVED if cmd.resolution is Resolution.APPROVE else AuditAction.REVIEW_DENIED
        uow.audit.add(AuditEntry(action, by.event_id, by.trace_id, by.actor, memory_id=memory_id, detail=by.extra))
        uow.commit()
    return after, changed


def list_review_items(
    tenant: str, user: str, state: ReviewState | None, page: PageRequest, ports: MemoryPorts
) -> Page[ReviewItem]:
    with ports.uow(tenant) as uow:
        rows = uow.reviews.page(user=user, state=state, after_row_id=page.after, limit=page.size + 1)
    return Page.from_rows(rows, page)


def _get(uow: MemoryUnitOfWork, review_item_id: str, *, lock: bool) -> ReviewItem:
    item = uow.reviews.get(review_item_id, lock=lock)
    if item is None:
        raise ReviewItemNotFound(f"review item {review_item_id} not found")
    return item


def _load(tenant: str, review_item_id: str, ports: MemoryPorts) -> ReviewItem:
    with ports.uow(tenant) as uow:
        return _get(uow, review_item_id, lock=False)
