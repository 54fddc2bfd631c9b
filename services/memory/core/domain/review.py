"""Review items: decisions held for a human, and the one-way rules of resolving them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from services.common.vocabulary import Decision
from services.memory.core.domain.errors import ReviewAlreadyResolved


class ReviewState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    DELETED = "deleted"


class Resolution(StrEnum):
    APPROVE = "approve"
    DENY = "deny"


_STATE_OF = {Resolution.APPROVE: ReviewState.APPROVED, Resolution.DENY: ReviewState.DENIED}


@dataclass(frozen=True)
class ReviewItem:
    """A held decision. Its candidate text lives in the candidate record (scrubbable by deletion)."""

    review_item_id: str
    tenant: str
    user: str
    decision: Decision
    state: ReviewState
    event_id: str
    trace_id: str
    candidate_id: str
    created_at: datetime
    reviewer: str = ""
    resolution_reason: str = ""
    memory_id: str = ""
    resolved_at: datetime | None = None


def needs_resolution(item: ReviewItem, resolution: Resolution) -> bool:
    """True when the item is pending; False when it already carries this same verdict (a repeat).

    Raises ReviewAlreadyResolved when it was resolved the other way or removed, so a second
    reviewer can never flip a verdict silently.
    """
    if item.state is ReviewState.PENDING:
        return True
    if item.state is _STATE_OF[resolution]:
        return False
    raise ReviewAlreadyResolved(f"review item {item.review_item_id} is already {item.state.value}")


def resolved(
    item: ReviewItem, resolution: Resolution, *, reviewer: str, reason: str, memory_id: str, now: datetime
) -> ReviewItem:
    """The item after its verdict: approved items name the memory they became."""
    return replace(
        item,
        state=_STATE_OF[resolution],
        reviewer=reviewer,
        resolution_reason=reason,
        memory_id=memory_id,
        resolved_at=now,
    )
