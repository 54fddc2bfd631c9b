"""The ports the deletion use cases and workflow name: the ledger and scrub repositories on the
memory unit of work, the cross-tenant queue, serving's content, the streams, and this replica's index.

Every method that changes something is idempotent: the workflow may run a step again after a
crash at any point, and a second run must find nothing left to do and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

from services.memory.core.domain.audit import AuditEntry
from services.memory.core.service.ports import MemoryRepository, ProcessedEventRepository, RequestRepository
from services.memory.deletion.domain.deletion import Deletion, ForgetScope, MemoryRef, StepState


@dataclass(frozen=True)
class NewDeletion:
    """The ledger row written by the acknowledging transaction."""

    deletion_id: str
    tenant: str
    scope: ForgetScope
    memory_id: str
    user: str
    event_id: str
    source_request_id: str
    request_id: str
    requested_by: str
    reason: str
    trace_id: str
    memories_affected: int
    created_at: datetime
    lease_owner: str
    lease_until: datetime


@dataclass(frozen=True)
class EventItem:
    """A learning event a deletion covers: its id, user and serving's content reference if known."""

    event_id: str
    user: str = ""
    content_ref: str = ""


class DeletionLedger(Protocol):
    """The tenant's deletion rows, their items and steps (inside the memory unit of work)."""

    def live_replicas(self, liveness_seconds: float) -> list[str]: ...
    def memory_refs(self, memory_ids: Sequence[str]) -> list[MemoryRef]: ...
    def memory_refs_of_user(self, user: str) -> list[MemoryRef]: ...
    def sources_of_event(self, event_id: str) -> dict[str, frozenset[str]]:
        """Every memory the event is a source of, with all of that memory's sources."""
        ...

    def user_of_event(self, event_id: str) -> str: ...
    def add(self, deletion: NewDeletion, locations: Sequence[str], done: Sequence[str]) -> None: ...
    def add_memory_items(self, deletion_id: str, memories: Sequence[MemoryRef]) -> None: ...
    def add_candidate_items(self, deletion_id: str, scope: ForgetScope, *, event_id: str, user: str) -> int:
        """Candidates the deletion scrubs: of the event, of the user, or (memory scope) those that
        wrote one of its memory items or carry the same meaning for the same user (a pending review
        of the same text would otherwise bring the fact back when approved)."""
        ...

    def add_event_items(self, deletion_id: str, events: Sequence[EventItem]) -> None:
        """Insert events not yet listed; a known event keeps its row (and gains a content ref)."""
        ...

    def add_user_event_items(self, deletion_id: str, user: str) -> int: ...
    def get(self, deletion_id: str) -> Deletion | None: ...
    def memory_items(self, deletion_id: str) -> list[MemoryRef]: ...
    def event_items(self, deletion_id: str, *, open_only: bool) -> list[EventItem]: ...
    def mark_events_done(self, deletion_id: str, event_ids: Sequence[str]) -> None: ...
    def mark_step(self, deletion_id: str, location: str, state: StepState, error: str, now: datetime) -> None:
        """Record a step's state (a done step stays done: a late failure report cannot undo it)."""
        ...


class DeletionScrubber(Protocol):
    """The derived records a deletion removes or scrubs (inside the memory unit of work)."""

    def delete_vectors(self, deletion_id: str) -> int: ...
    def shared_memories(self, event_id: str, deleted: Sequence[str]) -> list[str]:
        """Memories the event is a source of that the deletion did not delete (other sources too)."""
        ...

    def unlink_sources(self, event_id: str, memory_ids: Sequence[str]) -> list[str]: ...
    def scrub_candidates(self, deletion_id: str) -> int: ...
    def review_items_of(self, deletion_id: str) -> list[str]:
        """Review items of the deletion's candidates or events."""
        ...

    def delete_notes(self, deletion_id: str, *, review_item_ids: Sequence[str], procedure_ids: Sequence[str]) -> int:
        """Delete reviewers' and operators' free-text reasons about the deleted memories, items, rules."""
        ...

    def delete_review_items(self, review_item_ids: Sequence[str]) -> list[str]:
        """State `deleted`, reason blanked; returns the ids this call changed (a repeat: none)."""
        ...

    def scrub_outcomes(self, deletion_id: str, *, only_deleted_memories: bool) -> int:
        """Blank candidate keys in the outcomes of the deletion's events (all decisions', or only
        those that wrote its memories); returns the outcomes this call changed."""
        ...

    def tombstone(self, event_id: str, user: str, outcome: dict[str, Any]) -> bool:
        """Record the event as processed (with `outcome`) unless it is; True if this call did."""
        ...

    def tombstone_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> int:
        """`tombstone` for (event id, user, outcome) triples in one statement; returns rows recorded."""
        ...

    def procedures_of(self, deletion_id: str, *, review_item_ids: Sequence[str], user: str) -> list[str]:
        """Learned procedures from the review items, the deletion's events or (with `user`) the user."""
        ...

    def forget_procedure(self, procedure_id: str, deletion_id: str) -> bool: ...


class _Audit(Protocol):
    def add(self, entry: AuditEntry) -> None: ...
    def add_many(self, entries: Sequence[AuditEntry]) -> None: ...
    def add_per_memory(self, entry: AuditEntry, memory_ids: Sequence[str]) -> None:
        """`entry` once per memory id, in order, in one statement (no free-text reason)."""
        ...


class DeletionUnitOfWork(Protocol):
    """The slice of the memory unit of work deletion uses (the SQL memory UoW for deletions is one)."""

    @property
    def memories(self) -> MemoryRepository: ...
    @property
    def events(self) -> ProcessedEventRepository: ...
    @property
    def requests(self) -> RequestRepository: ...
    @property
    def audit(self) -> _Audit: ...
    @property
    def deletions(self) -> DeletionLedger: ...
    @property
    def scrub(self) -> DeletionScrubber: ...

    def __enter__(self) -> DeletionUnitOfWork: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    def commit(self) -> None: ...
    def lock(self, key: str) -> None: ...


DeletionUnitOfWorkFactory = Callable[[str], DeletionUnitOfWork]


class DeletionQueue(Protocol):
    """Cross-tenant bookkeeping (the maintenance scope "*"): replicas, leases, replica steps."""

    def register(self, replica_id: str) -> None: ...
    def heartbeat(self, replica_id: str) -> None: ...
    def stopped(self, replica_id: str) -> None: ...
    def claim(self, replica_id: str, lease_seconds: float, skip: Sequence[str]) -> tuple[str, str] | None:
        """Lease the oldest deletion with an own step not done (not leased, or leased by us)."""
        ...

    def release(self, deletion_id: str) -> None: ...
    def own_steps(self, location: str) -> list[tuple[str, str]]:
        """(deletion id, tenant) of every step at `location` that is not done."""
        ...

    def target_rows(self, deletion_ids: Sequence[str]) -> dict[str, list[int]]:
        """The index row ids those deletions removed, by tenant."""
        ...

    def mark_replica_done(self, deletion_ids: Sequence[str], location: str) -> None: ...
    def flag_silent_replicas(self, liveness_seconds: float) -> int:
        """Mark pending replica steps of replicas that stopped heartbeating as failed, saying why."""
        ...

    def complete_ready(self) -> list[str]:
        """Complete (and audit) every deletion whose steps are all done; returns their ids."""
        ...


@dataclass(frozen=True)
class OutboxEventRef:
    """What serving's outbox says about one request's learning event."""

    event_id: str
    user: str
    content_ref: str


class ServingContent(Protocol):
    """Serving's side of a deletion. Raises `Unavailable` when serving cannot be reached."""

    def event_of_request(self, tenant: str, request_id: str) -> OutboxEventRef | None: ...
    def delete_content(self, tenant: str, *, event_id: str, content_ref: str, deletion_id: str) -> bool:
        """Delete the event's blob and scrub the request's derived text; idempotent."""
        ...

    def delete_contents(self, tenant: str, events: Sequence[EventItem], deletion_id: str) -> None:
        """`delete_content` for many events in one call (by blob when known, else by event)."""
        ...


@dataclass(frozen=True)
class StreamErasure:
    """What erasing an event set from the streams did, and the events it found on the way."""

    erased: int
    found: tuple[EventItem, ...]


class StreamEraser(Protocol):
    """The learning and dead-letter streams. Raises `Unavailable` when NATS cannot be reached."""

    def erase(self, tenant: str, event_ids: frozenset[str], user: str) -> StreamErasure: ...


class ReplicaIndex(Protocol):
    """This replica's derived indexes, as the workflow needs them."""

    replica_id: str

    def catch_up(self) -> int: ...
    def holds(self, tenant: str, row_ids: Sequence[int]) -> list[int]: ...
    def persist(self, *, force: bool = False) -> bool: ...


class DeletionNotices(Protocol):
    """Best-effort wake-ups for peers (the database stays the truth; runners also poll)."""

    def requested(self, tenant: str, deletion_id: str) -> None: ...
    def acknowledged(self, tenant: str, deletion_id: str, location: str) -> None: ...
