"""Explicit lifecycle commands: supersede a memory with new text, deprecate one.

Both are single transactions through the same storing path as learning, both audited with the
caller as actor. The "event" of such a transition is the request_id (supersession) or a fresh
operation id `op-…` (deprecation), so every transition still names its cause. A supersession is
idempotent on its request_id (the whole command is fingerprinted: the same id with another text,
target or reason is RequestIdReused); deprecating an already deprecated memory returns it unchanged.
The trace id comes in the command, set by the entrypoint from the caller's span.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from services.common.vocabulary import Origin, Sensitivity, candidate_key
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.errors import MemoryNotFound
from services.memory.core.domain.model import MemoryRecord, MemoryStatus, deprecated
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.idempotency import fingerprint, remember, replayed
from services.memory.core.service.ports import MemoryUnitOfWork, Transition, Vector
from services.memory.core.service.retry import retry_on_conflict
from services.memory.core.service.storing import NewMemory, supersede_with

_SUPERSEDE = "memory.supersede"
OPERATOR_POLICY = "operator"


@dataclass(frozen=True)
class SupersedeMemory:
    tenant: str
    memory_id: str
    text: str
    request_id: str
    reason: str
    actor: str
    trace_id: str = ""


@dataclass(frozen=True)
class DeprecateMemory:
    tenant: str
    memory_id: str
    reason: str
    actor: str
    trace_id: str = ""


def supersede_memory(cmd: SupersedeMemory, ports: MemoryPorts) -> tuple[MemoryRecord, MemoryRecord]:
    """Returns (new active record, superseded record). A repeated request_id returns the first result."""
    vector = ports.embedder.embed([cmd.text], kind="document")[0]
    new_id, old_id, fresh = retry_on_conflict(
        ports.tuning.apply_attempts, ports.metrics, lambda: _supersede_once(cmd, ports, vector)
    )
    new, old = _load_pair(cmd.tenant, new_id, old_id, ports)
    if fresh:
        ports.effects.memories_changed(cmd.tenant, [new.user], [new_id, old_id])
    return new, old


def _supersede_once(cmd: SupersedeMemory, ports: MemoryPorts, vector: Vector) -> tuple[str, str, bool]:
    with ports.uow(cmd.tenant) as uow:
        uow.lock(f"request:{cmd.request_id}")
        digest = fingerprint(cmd)
        prior = replayed(uow.requests, cmd.request_id, operation=_SUPERSEDE, fingerprint=digest)
        if prior is not None:
            return str(prior["memory"]), str(prior["superseded"]), False
        old = _get(uow, cmd.memory_id, lock=True)
        by = Transition(
            event_id=cmd.request_id,
            trace_id=cmd.trace_id,
            actor=cmd.actor,
            now=ports.clock(),
            extra={"reason": cmd.reason},
        )
        new = NewMemory(
            tenant=cmd.tenant,
            user=old.user,
            type=old.type,
            text=cmd.text,
            intent_key=old.intent_key,
            confidence=1.0,
            origin=Origin.OPERATOR,
            sensitivity=Sensitivity.NORMAL,
            candidate_key=candidate_key(cmd.tenant, old.user, old.type, cmd.text),
            policy_version=OPERATOR_POLICY,
        )
        stored = supersede_with(uow, old, new, vector, embedder=ports.embedder.name, by=by)
        remember(
            uow.requests,
            cmd.request_id,
            operation=_SUPERSEDE,
            fingerprint=digest,
            result={"memory": stored.memory.memory_id, "superseded": old.memory_id},
        )
        uow.commit()
    return stored.memory.memory_id, old.memory_id, True


def deprecate_memory(cmd: DeprecateMemory, ports: MemoryPorts) -> MemoryRecord:
    """Retire an active memory without replacement; idempotent for an already deprecated one."""
    with ports.uow(cmd.tenant) as uow:
        record = _get(uow, cmd.memory_id, lock=True)
        now = ports.clock()
        retired = deprecated(record, now=now)
        if retired is None:
            return record
        trace_id, operation_id = cmd.trace_id, f"op-{uuid.uuid4().hex}"
        uow.memories.set_status(
            record.memory_id, MemoryStatus.DEPRECATED, superseded_by=None, event_id=operation_id, trace_id=trace_id
        )
        uow.audit.add(
            AuditEntry(
                AuditAction.MEMORY_DEPRECATED,
                event_id=operation_id,
                trace_id=trace_id,
                actor=cmd.actor,
                memory_id=record.memory_id,
                detail={"reason": cmd.reason},
            )
        )
        uow.commit()
    ports.effects.memories_changed(cmd.tenant, [record.user], [record.memory_id])
    return _load_one(cmd.tenant, cmd.memory_id, ports)


def _get(uow: MemoryUnitOfWork, memory_id: str, *, lock: bool) -> MemoryRecord:
    record = uow.memories.get(memory_id, lock=lock)
    if record is None:
        raise MemoryNotFound(f"memory {memory_id} not found")
    return record


def _load_one(tenant: str, memory_id: str, ports: MemoryPorts) -> MemoryRecord:
    with ports.uow(tenant) as uow:
        return _get(uow, memory_id, lock=False)


def _load_pair(tenant: str, new_id: str, old_id: str, ports: MemoryPorts) -> tuple[MemoryRecord, MemoryRecord]:
    with ports.uow(tenant) as uow:
        return _get(uow, new_id, lock=False), _get(uow, old_id, lock=False)
