"""Read-only use cases: one memory, a filtered page, a lineage chain, a processed event, audit.

Each reads in its own tenant-scoped transaction (row-level security applies) and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from services.memory.core.domain.audit import AuditEvent
from services.memory.core.domain.errors import MemoryNotFound
from services.memory.core.domain.model import MemoryRecord, lineage_order
from services.memory.core.domain.outcome import ApplyOutcome
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.pagination import Page, PageRequest
from services.memory.core.service.ports import MemoryFilter


def get_memory(tenant: str, memory_id: str, ports: MemoryPorts) -> MemoryRecord:
    with ports.uow(tenant) as uow:
        record = uow.memories.get(memory_id)
    if record is None:
        raise MemoryNotFound(f"memory {memory_id} not found")
    return record


def list_memories(tenant: str, where: MemoryFilter, page: PageRequest, ports: MemoryPorts) -> Page[MemoryRecord]:
    with ports.uow(tenant) as uow:
        records = uow.memories.page(where, after_row_id=page.after, limit=page.size + 1)
    return Page.from_rows([(r.row_id, r) for r in records], page)


def get_lineage(tenant: str, memory_id: str, ports: MemoryPorts) -> list[MemoryRecord]:
    """The whole supersession chain through `memory_id`, oldest first."""
    with ports.uow(tenant) as uow:
        chain = uow.memories.chain(memory_id)
    if not chain:
        raise MemoryNotFound(f"memory {memory_id} not found")
    return lineage_order(chain)


def get_processed_event(tenant: str, event_id: str, ports: MemoryPorts) -> tuple[ApplyOutcome, datetime] | None:
    with ports.uow(tenant) as uow:
        found = uow.events.get(event_id)
    if found is None:
        return None
    return ApplyOutcome.from_json(found[0], already_processed=True), found[1]


def get_processed_events(
    tenant: str, event_ids: Sequence[str], ports: MemoryPorts
) -> dict[str, tuple[ApplyOutcome, datetime]]:
    """`get_processed_event` for many events in one read (the worker's batch check, one round trip:
    no unit of work, see `ports.active`); the processed ones only, by event id."""
    found = ports.active.processed_among(tenant, event_ids)
    return {
        event_id: (ApplyOutcome.from_json(row[0], already_processed=True), row[1]) for event_id, row in found.items()
    }


def list_audit_events(
    tenant: str, event_id: str, memory_id: str, page: PageRequest, ports: MemoryPorts
) -> Page[AuditEvent]:
    with ports.uow(tenant) as uow:
        events = uow.audit.page(event_id=event_id, memory_id=memory_id, after_seq=page.after, limit=page.size + 1)
    return Page.from_rows([(e.seq, e) for e in events], page)
