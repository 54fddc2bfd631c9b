"""What serving records for one handled request: the command it receives and the facts it commits.

Plain dataclasses and pure functions (standard library only). Raw content only ever exists in a
`HandleRequestCommand`; every type that is stored (`StoredContent`, `StoredToolOutcome`, …) holds
text that has already been redacted, and attachments are kept as metadata (`AttachmentMeta`),
never as bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from services.serving.domain.sender import NO_VERDICT, OwnerClaim, SenderAuthentication
from services.serving.domain.sender import bare_address as bare_address


@dataclass(frozen=True)
class Attachment:
    """An attachment as the client sent it (raw bytes: never stored)."""

    filename: str
    media_type: str
    data: bytes


@dataclass(frozen=True)
class AttachmentMeta:
    """What serving keeps of an attachment: enough to prove which file it was, nothing of its contents."""

    filename: str
    media_type: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class Email:
    """The handled email, raw (as received) or redacted (as stored), depending on who holds it."""

    from_address: str = ""
    to_address: str = ""
    subject: str = ""
    body: str = ""


@dataclass(frozen=True)
class ToolOutcome:
    """One tool call's outcome; `summary` is raw in a command and redacted once stored."""

    tool: str
    status: str
    ref: str = ""
    summary: str = ""


@dataclass(frozen=True)
class HandleRequestCommand:
    """Everything `HandleRequest` was asked to commit. Validated before any use case sees it."""

    request_id: str
    tenant: str
    user: str
    thread: str
    route: str
    procedure_versions: dict[str, str]
    tool_outcomes: tuple[ToolOutcome, ...]
    feedback_ref: str
    content: Email
    attachments: tuple[Attachment, ...]
    reply: str
    owner_address: str
    trace_id: str = ""
    span_id: str = ""
    sender_authentication: SenderAuthentication = NO_VERDICT


@dataclass(frozen=True)
class StoredContent:
    """A content blob as committed: redacted email, attachment metadata, and who wrote it."""

    content_ref: str
    tenant: str
    user: str
    request_id: str
    email: Email
    attachments: tuple[AttachmentMeta, ...]
    from_owner: bool


TENANT_NOT_FOUND = "TENANT_NOT_FOUND"
CONTENT_NOT_FOUND = "CONTENT_NOT_FOUND"


@dataclass(frozen=True)
class ContentRead:
    """One reference of a batch read: its blob, or why there is none (CONTENT_NOT_FOUND, TENANT_NOT_FOUND)."""

    content_ref: str
    content: StoredContent | None
    error_reason: str = ""


@dataclass(frozen=True)
class LearningEventRecord:
    """The learning event of a result: references and routing only (no body, no attachments)."""

    event_id: str
    trace_id: str
    request_id: str
    tenant: str
    user: str
    thread: str
    route: str
    procedure_versions: dict[str, str]
    tool_outcomes: tuple[ToolOutcome, ...]
    feedback_ref: str
    content_ref: str
    owner_address: str
    commit_time: datetime
    sender_authentication: SenderAuthentication = NO_VERDICT
    owner_claim: OwnerClaim = OwnerClaim.NOT_OWNER
    owner_claim_reason: str = ""
    redacted_by: str = ""  # the redactor that cleaned this event's summaries and content (its fingerprint)


@dataclass(frozen=True)
class StoredResult:
    """The committed result of a request: what a first call answered and every replay answers again."""

    result_id: str
    request_id: str
    tenant: str
    event_id: str
    trace_id: str
    content_ref: str
    reply: str
    commit_time: datetime
    replayed: bool = False


@dataclass(frozen=True)
class NewResult:
    """Everything one `HandleRequest` writes in its single transaction."""

    result: StoredResult
    user: str
    thread: str
    route: str
    procedure_versions: dict[str, str]
    feedback_ref: str
    tool_outcomes: tuple[ToolOutcome, ...]
    content: StoredContent
    event: LearningEventRecord
    span_id: str = ""


@dataclass(frozen=True)
class ForgottenRequest:
    """A request whose text a deletion blanked: which one, and the blob it referenced."""

    request_id: str
    content_ref: str


class OutboxState(StrEnum):
    PENDING = "pending"
    PUBLISHED = "published"


@dataclass(frozen=True)
class OutboxStatus:
    """An outbox row and its publication evidence, as `GetOutboxEvent` reports it."""

    payload: bytes
    state: OutboxState
    published_at: datetime | None = None
    stream_sequence: int = 0
    duplicate: bool = False
    publish_attempts: int = 0


@dataclass(frozen=True)
class ContentDeletion:
    """The minimal audit of a content deletion: ids and time, never content."""

    tenant: str
    content_ref: str
    deletion_id: str
    deleted_at: datetime
    existed: bool


def is_from_owner(from_address: str, owner_address: str, to_address: str) -> bool:
    """Whether the mailbox owner wrote the mail. Fails closed: unknown sender or owner → external.

    The owner defaults to the recipient (`to_address`) when the client names none. Decided on the
    raw addresses, before redaction replaces them with placeholders.
    """
    sender = bare_address(from_address)
    owner = bare_address(owner_address) or bare_address(to_address)
    return bool(sender) and sender == owner


def attachment_meta(attachment: Attachment, redact_name: str) -> AttachmentMeta:
    """Reduce an attachment to its metadata; `redact_name` is the filename after redaction."""
    return AttachmentMeta(
        filename=redact_name,
        media_type=attachment.media_type,
        size_bytes=len(attachment.data),
        sha256=hashlib.sha256(attachment.data).hexdigest(),
    )
