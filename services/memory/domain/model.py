"""Memory records and their lifecycle, as plain data. Imports only the standard library."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from services.common.vocabulary import MemoryType, Origin


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DEPRECATED = "deprecated"
    DELETED = "deleted"


@dataclass
class MemoryRecord:
    """One learned memory. Never rewritten in place: a change is a new record plus supersession."""

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
