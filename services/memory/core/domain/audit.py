"""Audit events: the immutable trail of every transition.

An audit row holds ids, codes, the actor, reasons and the policy version; never candidate or
memory text, so a deletion can leave the trail intact and still leave no content behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class AuditAction(StrEnum):
    MEMORY_STORED = "memory.stored"
    MEMORY_REINFORCED = "memory.provenance_added"
    MEMORY_SUPERSEDED = "memory.superseded"
    MEMORY_DEPRECATED = "memory.deprecated"
    REVIEW_CREATED = "review.created"
    REVIEW_APPROVED = "review.approved"
    REVIEW_DENIED = "review.denied"
    CANDIDATE_REJECTED = "candidate.rejected"
    EVENT_PROCESSED = "event.processed"
    LEARNED_PROCEDURE_SAVED = "learned_procedure.saved"
    LEARNED_PROCEDURE_SUPERSEDED = "learned_procedure.superseded"
    LEARNED_PROCEDURE_CONFIRMED = "learned_procedure.confirmed"
    LEARNED_PROCEDURE_DEPRECATED = "learned_procedure.deprecated"
    LEARNED_PROCEDURE_BACKFILLED = "learned_procedure.backfilled"
    DELETION_REQUESTED = "deletion.requested"
    DELETION_COMPLETED = "deletion.completed"
    MEMORY_DELETED = "memory.deleted"
    MEMORY_PROVENANCE_REMOVED = "memory.provenance_removed"
    REVIEW_DELETED = "review.deleted"
    LEARNED_PROCEDURE_FORGOTTEN = "learned_procedure.forgotten"


@dataclass(frozen=True)
class AuditEntry:
    """One transition to record. `detail` must be JSON-serialisable and content-free."""

    action: AuditAction
    event_id: str
    trace_id: str
    actor: str
    memory_id: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditEvent:
    """A stored audit row, as read back (the action is a plain string: later issues add their own)."""

    audit_id: str
    seq: int
    tenant: str
    action: str
    event_id: str
    trace_id: str
    memory_id: str
    actor: str
    detail: dict[str, Any]
    created_at: datetime
