"""Typed inputs and results of the client: plain frozen dataclasses, no protobuf in sight.

Enums are given as lower-case names (`"preference"`, `"active"`), the way they read in logs and
in the README; timestamps are timezone-aware UTC datetimes (None when the server left them unset).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

CONTEXT_VERSION_KEY = "memloop.context"
"""The procedure_versions entry that carries a context's version back to serving."""


@dataclass(frozen=True)
class Email:
    """The mail the agent handled; the owner's own mail may teach preferences, others' may not."""

    from_address: str
    to_address: str
    subject: str = ""
    body: str = ""


@dataclass(frozen=True)
class ToolOutcome:
    """One tool the agent called and what came of it."""

    tool: str
    status: str
    ref: str = ""
    summary: str = ""


@dataclass(frozen=True)
class RecordResult:
    """The committed result of `record`. `replayed` is True when serving had already committed this
    request id (for example from an attempt whose answer was lost) and returned that first result."""

    request_id: str
    result_id: str
    event_id: str
    trace_id: str
    content_ref: str
    reply: str
    replayed: bool
    commit_time: datetime | None
    attempts: int


@dataclass(frozen=True)
class Provenance:
    """Where a memory came from: the learning events, their trace, the policy that admitted it."""

    source_event_ids: tuple[str, ...]
    trace_id: str
    policy_version: str
    confidence: float
    origin: str


@dataclass(frozen=True)
class Memory:
    """A learned memory; `score` is its similarity to the query when it came from a search."""

    memory_id: str
    user: str
    type: str
    text: str
    intent_key: str
    state: str
    provenance: Provenance
    supersedes: str = ""
    superseded_by: str = ""
    score: float = 0.0
    create_time: datetime | None = None


@dataclass(frozen=True)
class Procedure:
    """An active learned procedure and the version of it that applies."""

    procedure_id: str
    intent_key: str
    version: int
    title: str
    kind: str
    scope: str
    trigger: str
    action: str
    rationale: str


@dataclass(frozen=True)
class Context:
    """What the agent should know before it acts, and the version that names exactly this context.

    Pass `procedure_versions` (or the Context itself) to `record(procedure_versions=...)`: the
    learning event then says which procedure versions and which context the agent acted on.
    """

    memories: tuple[Memory, ...]
    procedures: tuple[Procedure, ...]
    context_version: str
    procedure_versions: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Forgotten:
    """A deletion's acknowledgement: the targets are already unretrievable."""

    deletion_id: str
    memories_affected: int


@dataclass(frozen=True)
class DeletionStep:
    """One location a deletion must reach, and how far it got."""

    location: str
    state: str
    error: str
    complete_time: datetime | None


@dataclass(frozen=True)
class Deletion:
    """A deletion and the state of each location (`complete` once every one is done)."""

    deletion_id: str
    scope: str
    requested_by: str
    complete: bool
    memories_affected: int
    steps: tuple[DeletionStep, ...]
    create_time: datetime | None
    complete_time: datetime | None


@dataclass(frozen=True)
class ReviewItem:
    """A candidate memory held for a person to approve or deny, with the policy's reasons."""

    review_item_id: str
    user: str
    state: str
    type: str
    text: str
    intent_key: str
    reasons: tuple[str, ...]
    policy_version: str
    memory_id: str
    create_time: datetime | None
