"""The worker's own words: the event it was handed, what it read, what it decided, how it failed.

Plain dataclasses, no protobuf: the consumer entrypoint translates wire messages into these, the
use case works on them, and the gRPC adapters translate them back. Two error classes carry the one
distinction the consumer needs — retry later (`TransientError`) or dead-letter now
(`PermanentError`) — plus a stable UPPER_SNAKE reason for the dead-letter header.

No error string built here may contain text of the email: reasons and details name codes,
fields and ids only, because they end up in logs and dead-letter headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.common.vocabulary import Candidate, Decision, MemoryType, Outcome
from services.worker.domain.extraction import ToolOutcome


@dataclass(frozen=True)
class SenderVerdict:
    """The mail system's sender-authentication verdict and serving's owner conclusion, carried to memory's audit.

    Result words as RFC 8601 writes them ("pass", "fail", "softfail", ""); `owner_claim` is
    "not_owner", "verified" or "unverified"; nothing here names an address.
    """

    dmarc: str = ""
    dkim: str = ""
    spf: str = ""
    dkim_domain: str = ""
    owner_claim: str = ""
    owner_claim_reason: str = ""


@dataclass(frozen=True)
class LearningEventView:
    """A parsed, validated learning event: references and routing only (tool summaries are redacted)."""

    event_id: str
    trace_id: str
    request_id: str
    tenant: str
    user: str
    thread: str
    route: str
    content_ref: str
    owner_address: str
    procedure_versions: tuple[tuple[str, str], ...] = ()
    tool_outcomes: tuple[ToolOutcome, ...] = ()
    feedback_ref: str = ""
    # When serving committed the event: memory orders late statements of one intent by it.
    commit_time: datetime | None = None
    # The sender-authentication verdict serving received with the mail, for memory's audit.
    sender: SenderVerdict | None = None
    # The fingerprint of the redactor serving cleaned this event's summaries and content with ("": unknown).
    redacted_by: str = ""


@dataclass(frozen=True)
class EmailView:
    """The email serving returns for a content reference (redacted by serving with full coverage).

    `from_owner` is serving's verdict on whether the mailbox owner wrote it: the sender address
    is redacted by then, so the worker could not tell on its own.
    """

    user: str
    from_address: str
    to_address: str
    subject: str
    body: str
    from_owner: bool


@dataclass(frozen=True)
class ConflictRecord:
    """An active memory that a candidate may contradict, as memory reported it."""

    memory_id: str
    intent_key: str
    text: str
    type: MemoryType


@dataclass(frozen=True)
class Evaluation:
    """One candidate to put to policy, with the active records it may contradict and its event's scope."""

    candidate: Candidate
    conflicts: tuple[ConflictRecord, ...]
    user: str
    route: str


@dataclass(frozen=True)
class ApplyOutcome:
    """What memory confirmed for an event: True when it had been applied before (nothing changed)."""

    event_id: str
    already_processed: bool
    applied_count: int


@dataclass(frozen=True)
class ApplyRequest:
    """One event's decisions for memory to apply (one item of a batch apply)."""

    event_id: str
    trace_id: str
    user: str
    decisions: tuple[Decision, ...]
    event_time: datetime | None = None
    sender: SenderVerdict | None = None


@dataclass(frozen=True)
class ProcessResult:
    """The result of one event: skipped as already processed, or the decisions memory committed."""

    event_id: str
    already_processed: bool
    decisions: tuple[Decision, ...] = ()

    def count_by_outcome(self) -> dict[Outcome, int]:
        counts = dict.fromkeys(Outcome, 0)
        for decision in self.decisions:
            counts[decision.outcome] += 1
        return counts


class WorkerError(Exception):
    """A failure of one event. `reason` is UPPER_SNAKE; `detail` names codes and fields, never content."""

    def __init__(self, reason: str, detail: str = "", *, dependency: str = "") -> None:
        self.reason = reason
        self.detail = detail
        self.dependency = dependency
        super().__init__(self.describe())

    def describe(self) -> str:
        """The one-line, content-free description used for logs and the Memloop-Last-Error header."""
        where = f"{self.dependency}: " if self.dependency else ""
        return f"{where}{self.reason}" + (f" ({self.detail})" if self.detail else "")


class TransientError(WorkerError):
    """A dependency is down or slow; the same event may succeed later (retry with backoff)."""


class PermanentError(WorkerError):
    """The event cannot succeed as it is (malformed, unknown content, rejected input): dead-letter it."""
