"""The resumable half of a deletion: every location after the acknowledgement, each step idempotent.

Two duties, run by every memory replica on a timer and when woken:

1. As a replica: for each deletion waiting on `replica:<me>`, catch the index up with the change
   feed (the deletion set the rows `deleted`, so they leave the index), confirm the index holds
   none of the deletion's row ids, rewrite the persisted index (a new generation, the old one
   removed), then mark the step done and announce it. A replica that was not live when the
   deletion was acknowledged has no step; it catches up from the feed when it starts, before it
   serves, and rewrites its files then.
2. As a deleter: lease one deletion at a time whose own steps are not all done (its acknowledging
   replica first; anyone once the lease has expired) and run them in `RUNNER_ORDER`. A database
   step does its work and marks itself done in one transaction; an external step (serving, the
   streams) is idempotent and marks itself done after it succeeded. A crash anywhere leaves a
   step pending or failed, never half-recorded, and the next run (after a restart, or on another
   replica) repeats it harmlessly.

A failed step records a content-free error and is retried on the next pass; the others go on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from services.common.errors import MemloopError, Unavailable
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.service.deps import utc_now
from services.memory.deletion.domain.deletion import (
    CONTENT_BLOBS,
    DERIVED_RECORDS,
    RUNNER_ORDER,
    STREAMS,
    VECTORS,
    Deletion,
    ForgetScope,
    StepState,
    replica_location,
    tombstone_outcome,
)
from services.memory.deletion.service.ports import (
    DeletionNotices,
    DeletionQueue,
    DeletionUnitOfWork,
    DeletionUnitOfWorkFactory,
    EventItem,
    ReplicaIndex,
    ServingContent,
    StreamEraser,
)

_log = logging.getLogger(__name__)
_CONTENT_BATCH = 1000  # DeleteContents' documented maximum per call

AfterStep = Callable[[str, str], None]
"""Called with (deletion id, location) right after a step was recorded done (a test fault hook)."""


def no_fault(deletion_id: str, location: str) -> None:
    return None


@dataclass(frozen=True)
class WorkflowDeps:
    uow: DeletionUnitOfWorkFactory
    queue: DeletionQueue
    serving: ServingContent
    streams: StreamEraser
    replica: ReplicaIndex
    notices: DeletionNotices
    lease_seconds: float = 60.0
    liveness_seconds: float = 20.0
    parallelism: int = 16
    after_step: AfterStep = no_fault
    clock: Callable[[], datetime] = utc_now


class DeletionWorkflow:
    """One pass at a time (the caller serialises passes; see `entrypoints/deletion_loop.py`)."""

    def __init__(self, deps: WorkflowDeps) -> None:
        self._deps = deps
        self._steps: dict[str, Callable[[Deletion], None]] = {
            VECTORS: self._vectors,
            DERIVED_RECORDS: self._derived_records,
            STREAMS: self._streams,
            CONTENT_BLOBS: self._content_blobs,
        }

    def run_pass(self) -> int:
        """Acknowledge this replica's steps, run every deletion it can lease, complete what is done."""
        self.acknowledge_replica_steps()
        ran = 0
        tried: list[str] = []
        while claimed := self._deps.queue.claim(self._deps.replica.replica_id, self._deps.lease_seconds, tried):
            deletion_id, tenant = claimed
            tried.append(deletion_id)
            try:
                self.run_deletion(tenant, deletion_id)
                ran += 1
            finally:
                self._deps.queue.release(deletion_id)
        self._deps.queue.flag_silent_replicas(self._deps.liveness_seconds)
        self._deps.queue.complete_ready()
        return ran

    def acknowledge_replica_steps(self) -> int:
        """Report every deletion this replica's index and persisted files no longer hold."""
        location = replica_location(self._deps.replica.replica_id)
        waiting = self._deps.queue.own_steps(location)
        if not waiting:
            return 0
        self._deps.replica.catch_up()
        rows = self._deps.queue.target_rows([deletion_id for deletion_id, _ in waiting])
        held = {tenant: self._deps.replica.holds(tenant, ids) for tenant, ids in rows.items()}
        if any(held.values()):
            _log.warning("replica index still holds %d deleted rows; retrying", sum(map(len, held.values())))
            return 0
        self._deps.replica.persist(force=True)
        self._deps.queue.mark_replica_done([deletion_id for deletion_id, _ in waiting], location)
        for deletion_id, tenant in waiting:
            self._deps.notices.acknowledged(tenant, deletion_id, location)
            self._deps.after_step(deletion_id, location)
        self._deps.queue.complete_ready()
        return len(waiting)

    def run_deletion(self, tenant: str, deletion_id: str) -> None:
        with self._deps.uow(tenant) as uow:
            deletion = uow.deletions.get(deletion_id)
        if deletion is None:
            return
        states = {s.location: s.state for s in deletion.steps}
        for location in RUNNER_ORDER:
            if states.get(location, StepState.DONE) is StepState.DONE:
                continue
            if location == CONTENT_BLOBS and states.get(STREAMS, StepState.DONE) is not StepState.DONE:
                continue  # the stream scan may still find events whose blobs must go too
            try:
                self._steps[location](deletion)
            except Exception as exc:
                self._failed(deletion, location, exc)
                continue
            states[location] = StepState.DONE
            self._deps.after_step(deletion_id, location)
        self._deps.queue.complete_ready()

    # --- the steps ------------------------------------------------------------------------------

    def _vectors(self, deletion: Deletion) -> None:
        with self._deps.uow(deletion.tenant) as uow:
            uow.scrub.delete_vectors(deletion.deletion_id)
            self._done(uow, deletion, VECTORS)

    def _derived_records(self, deletion: Deletion) -> None:
        """Provenance, candidates, review items, processed outcomes, learned procedures: one
        transaction, each a statement over the deletion's items (a user's ten thousand events are
        joined in the database, never sent back and forth)."""
        with self._deps.uow(deletion.tenant) as uow:
            scrub, did = uow.scrub, deletion.deletion_id
            entries: list[AuditEntry] = []
            if deletion.scope is ForgetScope.EVENT:
                deleted = [m.memory_id for m in uow.deletions.memory_items(did)]
                for memory_id in scrub.unlink_sources(
                    deletion.event_id, scrub.shared_memories(deletion.event_id, deleted)
                ):
                    detail = {"deletion_id": did, "source_event_id": deletion.event_id}
                    entries.append(self._entry(AuditAction.MEMORY_PROVENANCE_REMOVED, deletion, memory_id, detail))
            # a memory-scope forget blanks only the keys of the decisions that wrote its memories
            scrub.scrub_outcomes(did, only_deleted_memories=deletion.scope is ForgetScope.MEMORY)
            scrub.scrub_candidates(did)
            reviews = scrub.review_items_of(did)
            for review_item_id in scrub.delete_review_items(reviews):
                detail = {"deletion_id": did, "review_item_id": review_item_id}
                entries.append(self._entry(AuditAction.REVIEW_DELETED, deletion, "", detail))
            user = deletion.user if deletion.scope is ForgetScope.USER else ""
            procedures = scrub.procedures_of(did, review_item_ids=reviews, user=user)
            scrub.delete_notes(did, review_item_ids=reviews, procedure_ids=procedures)
            for procedure_id in procedures:
                if scrub.forget_procedure(procedure_id, did):
                    detail = {"deletion_id": did, "procedure_id": procedure_id}
                    entries.append(self._entry(AuditAction.LEARNED_PROCEDURE_FORGOTTEN, deletion, "", detail))
            uow.audit.add_many(entries)
            self._done(uow, deletion, DERIVED_RECORDS)

    def _streams(self, deletion: Deletion) -> None:
        """Erase the events' messages from the learning and dead-letter streams; for a user, also
        every message of the user, whose events then join the deletion (content, tombstone)."""
        with self._deps.uow(deletion.tenant) as uow:
            known = uow.deletions.event_items(deletion.deletion_id, open_only=False)
        user = deletion.user if deletion.scope is ForgetScope.USER else ""
        erasure = self._deps.streams.erase(deletion.tenant, frozenset(e.event_id for e in known), user)
        with self._deps.uow(deletion.tenant) as uow:
            found = [EventItem(e.event_id, e.user or user, e.content_ref) for e in erasure.found]
            uow.deletions.add_event_items(deletion.deletion_id, found)
            uow.scrub.tombstone_many(
                [(e.event_id, e.user, tombstone_outcome(e.event_id, deletion.deletion_id)) for e in found]
            )
            self._done(uow, deletion, STREAMS)
        _log.info("deletion %s erased %d stream messages", deletion.deletion_id, erasure.erased)

    def _content_blobs(self, deletion: Deletion) -> None:
        """Serving deletes the events' blobs and scrubs their requests' text, a batch per call
        (set-based on serving's side); progress is kept per batch, so a retry resumes after it."""
        with self._deps.uow(deletion.tenant) as uow:
            waiting = uow.deletions.event_items(deletion.deletion_id, open_only=True)
        batches = [waiting[start : start + _CONTENT_BATCH] for start in range(0, len(waiting), _CONTENT_BATCH)]
        failures: list[Exception] = []
        with ThreadPoolExecutor(max_workers=max(1, min(self._deps.parallelism, 4))) as pool:
            for batch, error in zip(
                batches, pool.map(lambda b: self._delete_contents(deletion, b), batches), strict=True
            ):
                if error is not None:
                    failures.append(error)
                    continue
                with self._deps.uow(deletion.tenant) as uow:
                    uow.deletions.mark_events_done(deletion.deletion_id, [e.event_id for e in batch])
                    uow.commit()
        if failures:
            raise failures[0]
        with self._deps.uow(deletion.tenant) as uow:
            self._done(uow, deletion, CONTENT_BLOBS)

    def _delete_contents(self, deletion: Deletion, events: list[EventItem]) -> Exception | None:
        try:
            self._deps.serving.delete_contents(deletion.tenant, events, deletion.deletion_id)
        except Exception as exc:
            return exc
        return None

    # --- bookkeeping ----------------------------------------------------------------------------

    def _done(self, uow: DeletionUnitOfWork, deletion: Deletion, location: str) -> None:
        uow.deletions.mark_step(deletion.deletion_id, location, StepState.DONE, "", self._deps.clock())
        uow.commit()

    def _failed(self, deletion: Deletion, location: str, exc: Exception) -> None:
        error = describe(exc)
        if isinstance(exc, MemloopError):
            _log.warning("deletion %s: %s failed (%s); retrying later", deletion.deletion_id, location, error)
        else:
            _log.exception("deletion %s: %s failed unexpectedly; retrying later", deletion.deletion_id, location)
        try:
            with self._deps.uow(deletion.tenant) as uow:
                uow.deletions.mark_step(deletion.deletion_id, location, StepState.FAILED, error, self._deps.clock())
                uow.commit()
        except Exception:
            _log.exception("could not record the failure of %s at %s", deletion.deletion_id, location)

    def _entry(self, action: AuditAction, deletion: Deletion, memory_id: str, detail: dict[str, str]) -> AuditEntry:
        return AuditEntry(action, deletion.deletion_id, "", deletion.requested_by, memory_id, detail)


def describe(exc: Exception) -> str:
    """A failure as a deletion step shows it: our own errors' messages (ids and codes only), else
    the exception's type, so no driver message can carry a parameter's text into the ledger."""
    if isinstance(exc, Unavailable | MemloopError):
        return f"{exc.reason}: {exc.message}"[:500]
    return type(exc).__name__
