"""Memory records and their lifecycle, as plain data and pure rules. Imports only the standard library.

Nothing learned is rewritten in place: a change is a new record plus the old one superseded,
and the functions here are the only place that says which transitions are allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from services.common.vocabulary import MemoryType, Origin
from services.memory.core.domain.errors import MemoryNotActive


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DEPRECATED = "deprecated"
    DELETED = "deleted"


@dataclass
class MemoryRecord:
    """One learned memory. Never rewritten in place: a change is a new record plus supersession.

    `row_id` is the database's integer identity (also the id in the vector indexes); `event_id`
    and `trace_id` name the event that created the record, `status_event_id` the last transition.
    `change_seq` grows on every write to the row and drives replica index watermarks.
    """

    memory_id: str
    tenant: str
    user: str
    type: MemoryType
    text: str
    status: MemoryStatus
    confidence: float
    origin: Origin
    candidate_key: str
    trace_id: str
    policy_version: str
    created_at: datetime
    updated_at: datetime
    intent_key: str = ""
    source_event_ids: tuple[str, ...] = field(default_factory=tuple)
    supersedes: str | None = None
    superseded_by: str | None = None
    event_id: str = ""
    row_id: int = 0
    change_seq: int = 0
    # When the statement was made (serving's commit of its event), as opposed to when it was
    # learned: events may be learned out of order, and the later statement must win.
    observed_at: datetime | None = None

    @property
    def stated_at(self) -> datetime:
        return self.observed_at or self.created_at


class StoreAction(StrEnum):
    """What storing a candidate does, given the active records it meets."""

    CREATE = "create"
    REUSE = "reuse"
    SUPERSEDE = "supersede"


@dataclass(frozen=True)
class StorePlan:
    """The decision of `plan_store`: which existing record (if any) is reused or superseded."""

    action: StoreAction
    existing: MemoryRecord | None = None


def plan_store(same_meaning: MemoryRecord | None, same_intent: MemoryRecord | None) -> StorePlan:
    """Decide how a candidate becomes active.

    The same meaning already active is the same fact: reuse it (its provenance grows), so one
    fact from two events is one memory. Otherwise an active record of the same intent is a
    changed preference: supersede it. Otherwise create.
    """
    if same_meaning is not None:
        _require_active(same_meaning)
        return StorePlan(StoreAction.REUSE, same_meaning)
    if same_intent is not None:
        _require_active(same_intent)
        return StorePlan(StoreAction.SUPERSEDE, same_intent)
    return StorePlan(StoreAction.CREATE)


def superseded(old: MemoryRecord, *, by: str, now: datetime) -> MemoryRecord:
    """The old record after `by` replaced it; raises MemoryNotActive unless it is active."""
    _require_active(old)
    return replace(old, status=MemoryStatus.SUPERSEDED, superseded_by=by, updated_at=now)


def deprecated(record: MemoryRecord, *, now: datetime) -> MemoryRecord | None:
    """The record retired without replacement, or None when it already is (idempotent).

    Raises MemoryNotActive for superseded or deleted records: their state is final.
    """
    if record.status is MemoryStatus.DEPRECATED:
        return None
    _require_active(record)
    return replace(record, status=MemoryStatus.DEPRECATED, updated_at=now)


def _require_active(record: MemoryRecord) -> None:
    if record.status is not MemoryStatus.ACTIVE:
        raise MemoryNotActive(f"memory {record.memory_id} is {record.status.value}, not active")


def lineage_order(records: list[MemoryRecord]) -> list[MemoryRecord]:
    """Order the records of one supersession chain oldest first, following the links."""
    by_id = {r.memory_id: r for r in records}
    heads = [r for r in records if r.supersedes is None or r.supersedes not in by_id]
    ordered: list[MemoryRecord] = []
    seen: set[str] = set()
    for head in sorted(heads, key=lambda r: (r.created_at, r.row_id)):
        current: MemoryRecord | None = head
        while current is not None and current.memory_id not in seen:
            ordered.append(current)
            seen.add(current.memory_id)
            current = by_id.get(current.superseded_by or "")
    ordered.extend(r for r in records if r.memory_id not in seen)
    return ordered
