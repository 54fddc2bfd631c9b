"""Deletion as a workflow: scopes, locations, their states, and the pure rules of what a forget covers.

Imports only the standard library. The service layer asks these functions *what* to delete; the
adapters only know *how*. The rules written down here (see `docs` in each function):

- One memory: the memory and every earlier version it superseded (its predecessors). An earlier
  version is the same fact as it was before it changed, so keeping it would keep the fact; the
  later versions (successors) are newer statements the caller did not ask to forget and stay.
  Links between versions stay, content goes.
- One user: every memory of the tenant's user, whatever its state.
- One event: every memory whose *only* source is the event. A memory that other events also
  support survives, losing only that event's provenance row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from services.memory.core.domain.outcome import tombstone_outcome as tombstone_outcome  # one home: core


class ForgetScope(StrEnum):
    MEMORY = "memory"
    USER = "user"
    EVENT = "event"


class StepState(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


RETRIEVAL = "retrieval"
MEMORY_ROWS = "memory_rows"
VECTORS = "vectors"
DERIVED_RECORDS = "derived_records"
STREAMS = "streams"
CONTENT_BLOBS = "content_blobs"
REPLICA_PREFIX = "replica:"

DONE_AT_ACKNOWLEDGEMENT = (RETRIEVAL, MEMORY_ROWS)
"""Reached inside the acknowledging transaction: status `deleted` with text and key scrubbed."""

RUNNER_ORDER = (VECTORS, DERIVED_RECORDS, STREAMS, CONTENT_BLOBS)
"""The deleter's own steps, in order. Streams come before content blobs because scanning the
streams discovers events of a user that memory never learned (in flight, dead-lettered), whose
blobs the content step then deletes too."""

FORGOTTEN = "[forgotten]"
"""What a NOT NULL, non-empty text column holds once scrubbed (learned procedures' title/action)."""


def replica_location(replica_id: str) -> str:
    return f"{REPLICA_PREFIX}{replica_id}"


def is_replica_location(location: str) -> bool:
    return location.startswith(REPLICA_PREFIX)


def locations_for(scope: ForgetScope, replicas: Iterable[str]) -> list[str]:
    """Every location a deletion of `scope` must reach, in display order.

    A memory-scope forget reaches only memory's own records and indexes: the source emails in
    serving (and their events on the streams) hold more than the one fact and are forgotten with
    the event or user scope.
    """
    own = [RETRIEVAL, MEMORY_ROWS, VECTORS, DERIVED_RECORDS]
    if scope is not ForgetScope.MEMORY:
        own += [STREAMS, CONTENT_BLOBS]
    return own + [replica_location(r) for r in sorted(set(replicas))]


@dataclass(frozen=True)
class MemoryRef:
    """What the workflow needs of a memory row: ids, owner, state. Never its text."""

    memory_id: str
    row_id: int
    user: str
    status: str
    supersedes: str | None = None

    @property
    def deleted(self) -> bool:
        return self.status == "deleted"


def predecessors(chain: Sequence[MemoryRef], memory_id: str) -> list[MemoryRef]:
    """`memory_id` and every version it superseded, transitively (newest first)."""
    by_id = {m.memory_id: m for m in chain}
    found: list[MemoryRef] = []
    current = by_id.get(memory_id)
    while current is not None and current not in found:
        found.append(current)
        current = by_id.get(current.supersedes or "")
    return found


@dataclass(frozen=True)
class EventSplit:
    """What forgetting one event does to the memories it supports."""

    deleted: frozenset[str]
    unlinked: frozenset[str]


def split_by_sources(sources: Mapping[str, frozenset[str]], event_id: str) -> EventSplit:
    """Memories whose only source is `event_id` are deleted; the others only lose that source."""
    deleted = frozenset(m for m, s in sources.items() if event_id in s and s <= {event_id})
    unlinked = frozenset(m for m, s in sources.items() if event_id in s and not s <= {event_id})
    return EventSplit(deleted, unlinked)


def scrub_outcome(outcome: Mapping[str, Any], memory_ids: frozenset[str] | None = None) -> dict[str, Any]:
    """A processed event's stored outcome without candidate keys (a key hashes the text's meaning,
    so it can confirm a guess). With `memory_ids`, only the decisions that wrote those memories.

    The rule; the deletion workflow applies it in the database, to all of a deletion's outcomes in
    one statement (`SqlDeletionScrubber.scrub_outcomes`, tested against this function)."""
    applied = []
    for entry in outcome.get("applied", []):
        blank = memory_ids is None or entry.get("memory_id") in memory_ids
        applied.append({**entry, "candidate_key": ""} if blank else dict(entry))
    return {**outcome, "applied": applied}


@dataclass(frozen=True)
class StreamMessage:
    """A message of the learning or dead-letter stream, reduced to what matching needs."""

    sequence: int
    event_id: str
    user: str
    content_ref: str


def message_matches(message: StreamMessage, event_ids: frozenset[str], user: str) -> bool:
    """A message belongs to the deletion if it carries one of its events or, for a user scope, the user."""
    return message.event_id in event_ids or (bool(user) and message.user == user)


def message_event_id(msg_id: str, parsed: str) -> str:
    """The event of a stream message: from its payload, else from its `Nats-Msg-Id`.

    Relay ids are the event id; dead-letter and replay ids are `<event_id>:dlq:<n>` and
    `<event_id>:replay:<n>`, so the part before the first ':' is the event either way.
    """
    return parsed or msg_id.split(":", 1)[0]


@dataclass(frozen=True)
class DeletionStep:
    location: str
    state: StepState
    error: str = ""
    completed_at: datetime | None = None
    attempts: int = 0


@dataclass(frozen=True)
class Deletion:
    """A deletion as its ledger holds it: who asked for what, and each location's progress."""

    deletion_id: str
    tenant: str
    scope: ForgetScope
    requested_by: str
    created_at: datetime
    memory_id: str = ""
    user: str = ""
    event_id: str = ""
    source_request_id: str = ""
    request_id: str = ""
    memories_affected: int = 0
    completed_at: datetime | None = None
    steps: tuple[DeletionStep, ...] = field(default_factory=tuple)

    @property
    def complete(self) -> bool:
        """Every location done and the completion recorded (with its audit row, in one transaction)."""
        return self.completed_at is not None and all(s.state is StepState.DONE for s in self.steps)
