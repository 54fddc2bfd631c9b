"""Forget and GetDeletion: the acknowledging half of the deletion workflow.

The second of the four files a forget passes through on its way to FAISS: after the commit below,
`deps.effects.memories_changed` (`core/service/index_sync.py`) catches this replica's index up
with the change feed, which removes the targets' vectors from FAISS (`core/adapters/faiss_index.py`).

`forget` does, in ONE transaction: resolve the targets, set them `deleted` with their text and
candidate key scrubbed (through the memories repository, so the change feed advances and every
replica drops their vectors), write the deletion, the items it covers (ids only) and one step per
location, tombstone a forgotten event memory never applied, and record the request id. After
the commit and before it returns, this replica's index and retrieval cache drop the targets and
peers are told. Retrieval re-checks every hit against the database, so from the acknowledgement
on no replica can return a target, whatever its index or cache still holds.

Everything after the acknowledgement (vectors, derived records, streams, serving's content,
every replica's index) is the resumable workflow in `workflow.py`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.errors import MemoryNotFound
from services.memory.core.service.deps import utc_now
from services.memory.core.service.idempotency import RequestLedger, fingerprint, remember, replayed
from services.memory.core.service.ports import Effects, MemoryMetrics
from services.memory.core.service.retry import retry_on_conflict
from services.memory.deletion.domain.deletion import (
    DONE_AT_ACKNOWLEDGEMENT,
    Deletion,
    ForgetScope,
    MemoryRef,
    locations_for,
    predecessors,
    split_by_sources,
    tombstone_outcome,
)
from services.memory.deletion.domain.errors import DeletionNotFound, EventNotFound
from services.memory.deletion.service.ports import (
    DeletionNotices,
    DeletionUnitOfWork,
    DeletionUnitOfWorkFactory,
    EventItem,
    NewDeletion,
    ServingContent,
)

_OPERATION = "memory.forget"


@dataclass(frozen=True)
class Forget:
    """A validated Forget request; exactly the field of its scope is set."""

    tenant: str
    scope: ForgetScope
    requested_by: str
    memory_id: str = ""
    user: str = ""
    event_id: str = ""
    source_request_id: str = ""
    request_id: str = ""
    reason: str = ""
    trace_id: str = ""


@dataclass(frozen=True)
class ForgetReceipt:
    deletion_id: str
    memories_affected: int
    repeated: bool = False


@dataclass(frozen=True)
class DeletionDeps:
    """What the acknowledging use case needs; bootstrap builds it once."""

    uow: DeletionUnitOfWorkFactory
    effects: Effects
    metrics: MemoryMetrics
    serving: ServingContent
    notices: DeletionNotices
    wake: Callable[[], None]
    replica_id: str
    liveness_seconds: float
    lease_seconds: float
    attempts: int = 6
    clock: Callable[[], datetime] = utc_now


@dataclass(frozen=True)
class _Acknowledged:
    receipt: ForgetReceipt
    users: frozenset[str] = frozenset()
    memory_ids: tuple[str, ...] = ()


def forget(cmd: Forget, deps: DeletionDeps) -> ForgetReceipt:
    """Acknowledge a deletion: its targets are unretrievable on every replica when this returns.

    Idempotent on `request_id` (a repeat returns the first deletion, even after a crash); the same
    id for any other content (target, reason, caller) is RequestIdReused. Raises MemoryNotFound for an unknown memory,
    EventNotFound for a request serving does not know, Unavailable if serving is needed and down.
    Nothing is written unless everything is.
    """
    prior = _prior(cmd, deps)
    if prior is not None:
        return prior
    event = _event_of(cmd, deps)
    done = retry_on_conflict(deps.attempts, deps.metrics, lambda: _acknowledge(cmd, event, deps))
    if not done.receipt.repeated:
        deps.effects.memories_changed(cmd.tenant, done.users, done.memory_ids)
        deps.notices.requested(cmd.tenant, done.receipt.deletion_id)
        deps.wake()
    return done.receipt


def get_deletion(tenant: str, deletion_id: str, deps: DeletionDeps) -> Deletion:
    with deps.uow(tenant) as uow:
        found = uow.deletions.get(deletion_id)
    if found is None:
        raise DeletionNotFound(f"deletion {deletion_id} not found")
    return found


def _prior(cmd: Forget, deps: DeletionDeps) -> ForgetReceipt | None:
    """A repeat is answered before serving is asked anything (it may be down by now)."""
    if not cmd.request_id:
        return None
    with deps.uow(cmd.tenant) as uow:
        return _repeat(cmd, uow.requests)


def _repeat(cmd: Forget, ledger: RequestLedger) -> ForgetReceipt | None:
    """The first deletion's receipt for a repeat of this very Forget; RequestIdReused for another."""
    result = replayed(ledger, cmd.request_id, operation=_OPERATION, fingerprint=fingerprint(cmd))
    if result is None:
        return None
    return ForgetReceipt(str(result["deletion_id"]), int(result["memories_affected"]), repeated=True)


def _event_of(cmd: Forget, deps: DeletionDeps) -> EventItem | None:
    if cmd.scope is not ForgetScope.EVENT:
        return None
    if cmd.event_id:
        return EventItem(cmd.event_id)
    found = deps.serving.event_of_request(cmd.tenant, cmd.source_request_id)
    if found is None:
        raise EventNotFound(f"serving knows no learning event for request {cmd.source_request_id!r}")
    return EventItem(found.event_id, found.user, found.content_ref)


def _acknowledge(cmd: Forget, event: EventItem | None, deps: DeletionDeps) -> _Acknowledged:
    with deps.uow(cmd.tenant) as uow:
        if cmd.request_id:
            uow.lock(f"request:{cmd.request_id}")
            repeated = _repeat(cmd, uow.requests)
            if repeated is not None:
                return _Acknowledged(repeated)
        if event is not None:
            uow.lock(f"event:{event.event_id}")  # ApplyLearning's lock: the event is applied before or not at all
        if cmd.scope is ForgetScope.USER:
            uow.lock(f"user:{cmd.user}")  # ApplyLearning's too: its writes commit before this ack, or see it
        targets = _targets(uow, cmd, event)
        fresh = [t for t in targets if not t.deleted]
        now, trace_id, deletion_id = deps.clock(), cmd.trace_id, uuid.uuid4().hex
        replicas = {*uow.deletions.live_replicas(deps.liveness_seconds), deps.replica_id}
        uow.deletions.add(
            _new_deletion(cmd, event, deletion_id, len(fresh), now, trace_id, deps),
            locations_for(cmd.scope, replicas),
            done=DONE_AT_ACKNOWLEDGEMENT,
        )
        uow.deletions.add_memory_items(deletion_id, targets)
        uow.deletions.add_candidate_items(
            deletion_id, cmd.scope, event_id=event.event_id if event else "", user=cmd.user or _user_of(targets)
        )
        if event is not None:
            user = event.user or uow.deletions.user_of_event(event.event_id)
            uow.deletions.add_event_items(deletion_id, [EventItem(event.event_id, user, event.content_ref)])
            uow.scrub.tombstone(event.event_id, user, tombstone_outcome(event.event_id, deletion_id))
        elif cmd.scope is ForgetScope.USER:
            uow.deletions.add_user_event_items(deletion_id, cmd.user)
        uow.memories.mark_deleted([t.memory_id for t in fresh], event_id=deletion_id, trace_id=trace_id)
        _audit(uow, cmd, event, deletion_id, trace_id, fresh, replicas)
        if cmd.request_id:
            result = {"deletion_id": deletion_id, "memories_affected": len(fresh)}
            remember(uow.requests, cmd.request_id, operation=_OPERATION, fingerprint=fingerprint(cmd), result=result)
        uow.commit()
    receipt = ForgetReceipt(deletion_id, len(fresh))
    return _Acknowledged(receipt, frozenset(t.user for t in fresh), tuple(t.memory_id for t in fresh))


def _targets(uow: DeletionUnitOfWork, cmd: Forget, event: EventItem | None) -> list[MemoryRef]:
    """The memories the deletion removes (see the rules in `domain/deletion.py`)."""
    if cmd.scope is ForgetScope.MEMORY:
        record = uow.memories.get(cmd.memory_id)
        if record is None:
            raise MemoryNotFound(f"memory {cmd.memory_id} not found")
        chain = [
            MemoryRef(r.memory_id, r.row_id, r.user, r.status.value, r.supersedes)
            for r in uow.memories.chain(cmd.memory_id)
        ]
        return predecessors(chain, cmd.memory_id)
    if cmd.scope is ForgetScope.USER:
        return uow.deletions.memory_refs_of_user(cmd.user)
    assert event is not None
    split = split_by_sources(uow.deletions.sources_of_event(event.event_id), event.event_id)
    return uow.deletions.memory_refs(sorted(split.deleted))


def _user_of(targets: Sequence[MemoryRef]) -> str:
    return targets[0].user if targets else ""


def _new_deletion(
    cmd: Forget,
    event: EventItem | None,
    deletion_id: str,
    affected: int,
    now: datetime,
    trace_id: str,
    deps: DeletionDeps,
) -> NewDeletion:
    return NewDeletion(
        deletion_id=deletion_id,
        tenant=cmd.tenant,
        scope=cmd.scope,
        memory_id=cmd.memory_id,
        user=cmd.user,
        event_id=event.event_id if event else "",
        source_request_id=cmd.source_request_id,
        request_id=cmd.request_id,
        requested_by=cmd.requested_by,
        reason=cmd.reason,
        trace_id=trace_id,
        memories_affected=affected,
        created_at=now,
        lease_owner=deps.replica_id,
        lease_until=now + timedelta(seconds=deps.lease_seconds),
    )


def _audit(
    uow: DeletionUnitOfWork,
    cmd: Forget,
    event: EventItem | None,
    deletion_id: str,
    trace_id: str,
    fresh: Sequence[MemoryRef],
    replicas: set[str],
) -> None:
    """One row for the request and one per memory made unretrievable: ids, scope, who; no content."""
    scope = {"deletion_id": deletion_id, "scope": cmd.scope.value}
    requested = {**scope, "memories": len(fresh), "replicas": sorted(replicas)}
    target = (("memory_id", cmd.memory_id), ("user", cmd.user), ("source_event_id", event.event_id if event else ""))
    for name, value in target:
        if value:
            requested[name] = value
    uow.audit.add(AuditEntry(AuditAction.DELETION_REQUESTED, deletion_id, trace_id, cmd.requested_by, detail=requested))
    deleted = AuditEntry(AuditAction.MEMORY_DELETED, deletion_id, trace_id, cmd.requested_by, detail=scope)
    uow.audit.add_per_memory(deleted, [t.memory_id for t in fresh])
