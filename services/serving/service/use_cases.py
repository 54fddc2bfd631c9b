"""Serving's use cases: one function per command, each one unit of work and at most one commit.

`handle_request` is the heart of the serving path: the result, its tool outcomes, the redacted
content blob and the outbox event commit together or not at all, and the caller is answered as
soon as they have. Redaction runs before the transaction opens, so no connection is held while
text is scanned.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from services.common.errors import Aborted, InvalidArgument, NotFound, require
from services.serving.domain.model import (
    CONTENT_NOT_FOUND,
    TENANT_NOT_FOUND,
    ContentDeletion,
    ContentRead,
    Email,
    HandleRequestCommand,
    LearningEventRecord,
    NewResult,
    OutboxStatus,
    StoredContent,
    StoredResult,
    attachment_meta,
)
from services.serving.domain.sender import OwnerClaim, judge_owner_claim
from services.serving.domain.validation import validate_handle_request
from services.serving.service.ports import Redact, UnitOfWorkFactory

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ServingDeps:
    """What the use cases need, wired once in bootstrap.

    `learning=False` (MEMLOOP_SERVING_LEARNING=off, a benchmark/operations switch) skips the outbox
    row: the result still commits and its response still names an event id, but no event exists.
    """

    uow_factory: UnitOfWorkFactory
    redact: Redact
    clock: Clock = utc_now
    learning: bool = True
    redacted_by: str = ""  # `redact`'s fingerprint, written into each learning event (the worker may skip its pass)


def handle_request(command: HandleRequestCommand, deps: ServingDeps) -> StoredResult:
    """Commit the result, tool outcomes, redacted content and learning event atomically.

    Idempotent on (tenant, request_id): a repeat, including one racing the first call, writes
    nothing and returns the first call's result with `replayed=True`. Raises InvalidArgument
    before anything is written.
    """
    validate_handle_request(command)
    new = prepare_result(command, deps.redact, deps.clock(), redacted_by=deps.redacted_by)
    with deps.uow_factory(command.tenant) as uow:
        # The inserts and their COMMIT go together (one round trip in SQL): the reply waits for nothing else.
        if not uow.add_new_request(new, with_event=deps.learning, commit=True):
            first = uow.results.get(command.request_id)
            if first is None:  # the first call committed and its result was removed since
                raise Aborted(f"request {command.request_id!r} changed while replaying; retry", reason="REPLAY_RACE")
            return replace(first, replayed=True)
    return new.result


def prepare_result(command: HandleRequestCommand, redact: Redact, now: datetime, *, redacted_by: str = "") -> NewResult:
    """Build every row of a new result from a validated command: fresh ids, redacted text only.

    Ownership is decided on the raw addresses and the sender-authentication verdict (a forged From
    is external), then the addresses are redacted like the rest. `redacted_by` (the fingerprint of
    the redactor behind `redact`) goes into the event: it vouches for this event's summaries and
    content blob, which are written in the same transaction.
    """
    result_id, event_id = str(uuid.uuid4()), str(uuid.uuid4())
    content_ref = f"cnt_{uuid.uuid4().hex}"
    trace_id = command.trace_id or secrets.token_hex(16)
    raw = command.content
    claim, claim_reason = judge_owner_claim(
        raw.from_address, command.owner_address, raw.to_address, command.sender_authentication
    )
    content = StoredContent(
        content_ref=content_ref,
        tenant=command.tenant,
        user=command.user,
        request_id=command.request_id,
        email=Email(
            from_address=redact(raw.from_address),
            to_address=redact(raw.to_address),
            subject=redact(raw.subject),
            body=redact(raw.body),
        ),
        attachments=tuple(attachment_meta(a, redact(a.filename)) for a in command.attachments),
        from_owner=claim is OwnerClaim.VERIFIED,
    )
    outcomes = tuple(replace(o, summary=redact(o.summary)) for o in command.tool_outcomes)
    result = StoredResult(
        result_id=result_id,
        request_id=command.request_id,
        tenant=command.tenant,
        event_id=event_id,
        trace_id=trace_id,
        content_ref=content_ref,
        reply=redact(command.reply),
        commit_time=now,
    )
    event = LearningEventRecord(
        event_id=event_id,
        trace_id=trace_id,
        request_id=command.request_id,
        tenant=command.tenant,
        user=command.user,
        thread=command.thread,
        route=command.route,
        procedure_versions=dict(command.procedure_versions),
        tool_outcomes=outcomes,
        feedback_ref=command.feedback_ref,
        content_ref=content_ref,
        owner_address=redact(command.owner_address or raw.to_address),
        commit_time=now,
        sender_authentication=command.sender_authentication,
        owner_claim=claim,
        owner_claim_reason=claim_reason,
        redacted_by=redacted_by,
    )
    return NewResult(
        result=result,
        user=command.user,
        thread=command.thread,
        route=command.route,
        procedure_versions=dict(command.procedure_versions),
        feedback_ref=command.feedback_ref,
        tool_outcomes=outcomes,
        content=content,
        event=event,
        span_id=command.span_id,
    )


def read_content(tenant: str, content_ref: str, deps: ServingDeps) -> StoredContent:
    """The redacted blob. NotFound with reason TENANT_NOT_FOUND when serving never handled a request
    of the tenant, CONTENT_NOT_FOUND when the blob never existed or was deleted: the worker
    dead-letters the two for different reasons."""
    require(content_ref, "content_ref")
    with deps.uow_factory(tenant) as uow:
        content = uow.contents.get(content_ref)
        known = content is not None or uow.contents.tenant_known()
    if not known:
        raise NotFound(f"tenant {tenant[:64]!r} is unknown to serving", reason=TENANT_NOT_FOUND)
    if content is None:
        raise NotFound(f"content {content_ref[:64]!r} not found", reason=CONTENT_NOT_FOUND)
    return content


def read_contents(tenant: str, content_refs: Sequence[str], deps: ServingDeps) -> list[ContentRead]:
    """Many blobs of one tenant in one transaction and one statement: one result per reference, in
    request order. A missing blob is its own result's `error_reason` (the reasons `read_content`
    raises), never the call's failure: a batch of the worker is not failed by one forgotten event.
    Raises InvalidArgument for an empty reference, naming it."""
    for index, ref in enumerate(content_refs):
        require(ref, f"content_refs[{index}]")
    if not content_refs:
        return []
    with deps.uow_factory(tenant) as uow:
        found = uow.contents.get_many(content_refs)
        known = bool(found) or uow.contents.tenant_known()
    missing = CONTENT_NOT_FOUND if known else TENANT_NOT_FOUND
    return [
        ContentRead(ref, found[ref]) if ref in found else ContentRead(ref, None, error_reason=missing)
        for ref in content_refs
    ]


def delete_content(tenant: str, content_ref: str, deletion_id: str, deps: ServingDeps, *, event_id: str = "") -> bool:
    """Remove the blob, blank the text its request left elsewhere in serving (the reply, the tool
    outcome summaries, and those summaries inside the outbox payload), and append a minimal audit
    row (ids and time). One transaction; idempotent.

    The blob is named by `content_ref`, or found through its learning event (`event_id`): an event
    serving does not know (or an id that is no UUID) is nothing to delete, not an error. True only
    for the call that actually removed a blob; later calls return False and change nothing but
    (for a new deletion_id) the audit.
    """
    require(deletion_id, "deletion_id")
    if not content_ref and not event_id:
        raise InvalidArgument("content_ref", "content_ref or event_id is required")
    if not content_ref:
        canonical = _canonical_uuid(event_id)
        if canonical is None:
            return False
        event_id = canonical
    with deps.uow_factory(tenant) as uow:
        request = uow.results.forget_text(content_ref=content_ref, event_id="" if content_ref else event_id)
        ref = content_ref or (request.content_ref if request is not None else "")
        if not ref:
            return False
        existed = uow.contents.delete(ref)
        if request is not None:
            uow.outbox.forget_text(request.request_id)
        uow.contents.record_deletion(ContentDeletion(tenant, ref, deletion_id, deps.clock(), existed))
        uow.commit()
    return existed


MAX_BATCH = 1000


def delete_contents(
    tenant: str, content_refs: list[str], event_ids: list[str], deletion_id: str, deps: ServingDeps
) -> int:
    """`delete_content` for many blobs of one deletion: one transaction, one statement per table.

    Returns how many blobs existed and were removed. An event id that is no UUID, or that serving
    does not know, is nothing to delete. Idempotent, like the single call.
    """
    require(deletion_id, "deletion_id")
    if len(content_refs) > MAX_BATCH:
        raise InvalidArgument("content_refs", f"must have at most {MAX_BATCH} items")
    if len(event_ids) > MAX_BATCH:
        raise InvalidArgument("event_ids", f"must have at most {MAX_BATCH} items")
    refs = list(dict.fromkeys(ref for ref in content_refs if ref))
    events = list(dict.fromkeys(c for c in map(_canonical_uuid, event_ids) if c is not None))
    if not refs and not events:
        return 0
    with deps.uow_factory(tenant) as uow:
        deleted = uow.delete_contents(refs, events, deletion_id, deps.clock())
        uow.commit()
    return deleted


def _canonical_uuid(value: str) -> str | None:
    """The id in PostgreSQL's canonical spelling, or None when it is no UUID.

    Python's parser is laxer than PostgreSQL's (it accepts "urn:uuid:" prefixes and hyphens
    anywhere), so the id sent to the database is always the canonical form, never the input.
    """
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def get_outbox_event(tenant: str, event_id: str, request_id: str, deps: ServingDeps) -> OutboxStatus:
    """The outbox row of an event (by id, or by the request that produced it) and its evidence."""
    if event_id:
        canonical = _canonical_uuid(event_id)
        if canonical is None:
            raise InvalidArgument("event_id", "must be a UUID")
        event_id = canonical
    elif not request_id:
        raise InvalidArgument("event_id", "event_id or request_id is required")
    with deps.uow_factory(tenant) as uow:
        status = uow.outbox.get(event_id=event_id, request_id="" if event_id else request_id)
    if status is None:
        raise NotFound(f"outbox event {event_id or request_id!r} not found")
    return status
