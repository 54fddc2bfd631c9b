"""The one audit helper of memory: a transition becomes an audit row, the same way in every capability.

Every row names its cause (event or request id), the trace, the actor and the memory or procedure it
is about; `detail` is ids, states and reasons only, never remembered text (the audit trail outlives
a forget). Writes into the caller's unit of work, so the row commits or rolls back with the change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from services.memory.core.domain.audit import AuditAction, AuditEntry

if TYPE_CHECKING:  # ports imports procedures' ports, which import this module: annotations only
    from services.memory.core.service.ports import Transition


class AuditLog(Protocol):
    """The audit repository as every capability's unit of work exposes it (`uow.audit`)."""

    def add(self, entry: AuditEntry) -> None: ...


def record_transition(
    log: AuditLog, action: AuditAction, subject_id: str, by: Transition, detail: Mapping[str, object] | None = None
) -> None:
    """Append one audit row for `subject_id` (a memory or procedure id); `by.extra` is kept under `detail`."""
    log.add(AuditEntry(action, by.event_id, by.trace_id, by.actor, subject_id, {**by.extra, **(detail or {})}))
