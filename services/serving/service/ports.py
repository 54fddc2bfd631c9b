"""The ports serving's use cases need: a unit of work with three repositories, and a redactor.

Real adapters live in `services.serving.adapters.repository` (PostgreSQL); in-memory ones in
`services.serving.adapters.in_memory` for unit tests. Both are held to one contract test.
"""

from __future__ import annotations

from collections.abc import Callable
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


UnitOfWorkFactory = Callable[[str], ServingUnitOfWork]
"""tenant → a fresh unit of work scoped (row-level security) to that tenant."""
