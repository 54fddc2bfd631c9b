"""The ports serving's use cases need: a unit of work with three repositories, and a redactor.

Real adapters live in `services.serving.adapters.repository` (PostgreSQL); in-memory ones in
`services.serving.adapters.in_memory` for unit tests. Both are held to one contract test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from services.serving.domain.model import (
    ContentDeletion,
    ForgottenRequest,
    LearningEventRecord,
    NewResult,
    OutboxStatus,
    StoredContent,
    StoredResult,
    ToolOutcome,
)

Redact = Callable[[str], str]
"""Text in, redacted text out (the shared Redactor, thorough: the worker's coverage). Never raises."""


class ResultRepository(Protocol):
    def add_if_new(self, new: NewResult) -> bool:
        """Insert the result unless (tenant, request_id) exists; True if this call inserted it.

        Waits for a concurrent insert of the same key to finish (unique constraint), so of N
        concurrent calls exactly one returns True.
        """
        ...

    def add_tool_outcomes(self, request_id: str, outcomes: tuple[ToolOutcome, ...]) -> None: ...

    def get(self, request_id: str) -> StoredResult | None: ...

    def forget_text(self, *, content_ref: str = "", event_id: str = "") -> ForgottenRequest | None:
        """Blank the reply and tool outcome summaries of the request with that blob (or event).

        Returns the request it found (None when none matches). Idempotent.
        """
        ...


class ContentRepository(Protocol):
    def add(self, content: StoredContent) -> None: ...

    def get(self, content_ref: str) -> StoredContent | None: ...

    def get_many(self, content_refs: Sequence[str]) -> dict[str, StoredContent]:
        """The blobs that exist among `content_refs`, by reference (absent ones are simply missing)."""
        ...

    def tenant_known(self) -> bool:
        """True when serving has handled any request of this tenant (to tell apart NOT_FOUND causes)."""
        ...

    def delete(self, content_ref: str) -> bool:
        """Remove the blob; True if it existed."""
        ...

    def record_deletion(self, deletion: ContentDeletion) -> None:
        """Append the audit row; a repeat of (content_ref, deletion_id) is absorbed."""
        ...


class OutboxRepository(Protocol):
    def add(self, event: LearningEventRecord, *, span_id: str) -> None:
        """Insert the event and wake the relays (NOTIFY, delivered at commit)."""
        ...

    def get(self, *, event_id: str = "", request_id: str = "") -> OutboxStatus | None: ...

    def forget_text(self, request_id: str) -> bool:
        """Blank the tool outcome summaries inside the request's payload; True if it changed."""
        ...


class ServingUnitOfWork(Protocol):
    """One transaction scoped to one tenant; rolls back unless `commit()` is called."""

    @property
    def results(self) -> ResultRepository: ...

    @property
    def contents(self) -> ContentRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def commit(self) -> None: ...

    def add_new_request(self, new: NewResult, *, with_event: bool, commit: bool = False) -> bool:
        """Insert the result, its tool outcomes, its content and (with_event) its outbox event,
        unless (tenant, request_id) exists; True if this call inserted them. A replay writes
        nothing. The SQL adapter sends the tenant setting and all the inserts in one round trip.
        `commit` commits the unit of work as well (in that same round trip, in SQL); the unit of
        work stays usable for reads afterwards (a replay reads the first call's result).
        """
        ...

    def delete_contents(self, content_refs: list[str], event_ids: list[str], deletion_id: str, now: datetime) -> int:
        """For each blob (named by reference, or by a canonical event id): blank its request's reply,
        tool outcome summaries and outbox summaries, delete it, and audit it (a reference named
        directly is audited even when already gone). Returns blobs removed. Set-based in SQL.
        """
        ...


UnitOfWorkFactory = Callable[[str], ServingUnitOfWork]
"""tenant → a fresh unit of work scoped (row-level security) to that tenant."""
