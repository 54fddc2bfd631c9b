"""The learning use case: one event in, one batch of governed decisions committed by memory.

Order matters and is the contract of hop 3 of the loop:

1. ask memory whether the event was already processed — if so, stop (redelivery is normal);
2. read the content by reference from serving;
3. redact it (thorough mode) before anything else — extractor, memory, policy, logs — sees it;
4. extract candidates (proposals, never writes);
5-6. ask policy for a decision on each candidate, and memory which active records the ones policy
   did not reject may contradict; those with any are put to policy again with them (`decide`);
7. hand every decision to memory in ONE ApplyLearning call, which claims the event atomically.

Steps 1-6 read only (`prepare_event`); step 7 is `apply_prepared`. A batch of events takes the
same steps with one call per batch (`services.worker.service.process_batch`) and falls back to
this one-event path to isolate an event a batch call refused.

Nothing here is persisted by the worker, so a crash anywhere before step 7 commits leaves no trace
and a redelivery redoes the same deterministic work; a crash after it is absorbed by memory's
event-level idempotency. Failures surface as `TransientError` or `PermanentError` from the ports.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from services.common.redaction import Redactor
from services.common.vocabulary import Candidate, Decision
from services.worker.domain.extraction import (
    CandidateExtractor,
    EmailContent,
    ExtractionInput,
    ExtractionSchemaError,
    ToolOutcome,
)
from services.worker.service.decide import Proposal, decide
from services.worker.service.model import (
    EmailView,
    LearningEventView,
    PermanentError,
    ProcessResult,
)
from services.worker.service.ports import ConflictFinder, ContentReader, MemoryApplier, PolicyGate

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LearningPorts:
    """The peers one event needs; bootstrap wires gRPC adapters, unit tests wire in-memory fakes."""

    content: ContentReader
    conflicts: ConflictFinder
    policy: PolicyGate
    memory: MemoryApplier


@dataclass(frozen=True)
class ReadyToApply:
    """An event whose decisions are made and signed: all that is left is memory's ApplyLearning."""

    event: LearningEventView
    decisions: tuple[Decision, ...]


Prepared = ReadyToApply | ProcessResult | BaseException
"""An event after the read-only steps: ready to apply, already final (processed before), or failed."""


async def process_event(
    event: LearningEventView,
    ports: LearningPorts,
    *,
    redactor: Redactor,
    extractor: CandidateExtractor,
) -> ProcessResult:
    """Turn one learning event into decisions and have memory apply them.

    Returns only after memory confirmed (the caller may then ack). Idempotent: a repeat of a
    processed event does no work and returns `already_processed=True`. Raises `TransientError`
    (retry later) or `PermanentError` (dead-letter); never anything carrying email text.
    """
    prepared = await prepare_event(event, ports, redactor=redactor, extractor=extractor)
    if isinstance(prepared, ProcessResult):
        return prepared
    return await apply_prepared(prepared, ports)


async def prepare_event(
    event: LearningEventView,
    ports: LearningPorts,
    *,
    redactor: Redactor,
    extractor: CandidateExtractor,
) -> ReadyToApply | ProcessResult:
    """Steps 1-6 for one event: nothing is written anywhere. Raises like `process_event`."""
    if await ports.memory.already_processed(event.tenant, event.event_id):
        return ProcessResult(event_id=event.event_id, already_processed=True)

    email = check_owner(event, await ports.content.read(event.tenant, event.content_ref))
    # Redaction and rule extraction are CPU work: off the event loop, so other events keep moving.
    candidates = await asyncio.to_thread(redact_and_extract, event, email, redactor, extractor)
    decisions = await _decide(event, candidates, ports) if candidates else []
    return ReadyToApply(event, tuple(decisions))


async def apply_prepared(ready: ReadyToApply, ports: LearningPorts) -> ProcessResult:
    """Step 7: memory applies the event's decisions in one transaction (idempotent on the event id)."""
    event = ready.event
    outcome = await ports.memory.apply(
        event_id=event.event_id,
        trace_id=event.trace_id,
        tenant=event.tenant,
        user=event.user,
        decisions=ready.decisions,
        event_time=event.commit_time,
        sender=event.sender,
    )
    return ProcessResult(
        event_id=event.event_id, already_processed=outcome.already_processed, decisions=ready.decisions
    )


def check_owner(event: LearningEventView, email: EmailView) -> EmailView:
    """The content must belong to the event's user; PermanentError otherwise."""
    if email.user and email.user != event.user:
        raise PermanentError("CONTENT_USER_MISMATCH", "content belongs to another user", dependency="serving")
    return email


#: Decisions memory applies for one event (ApplyLearningRequest.decisions' limit, checked by a test).
MAX_CANDIDATES_PER_EVENT = 256


def within_limit(candidates: list[Candidate]) -> list[Candidate]:
    """The first candidates in reading order (tool outcomes first), as many as one apply takes.

    A mail of thousands of preference-shaped sentences (a pasted list, or a sender's attempt to
    flood memory) once made an ApplyLearning memory refused, so the event was dead-lettered and
    nothing of it learned; now its first sentences are decided and the rest are not read, which
    the log says with their count (the event's ids are on the record).
    """
    if len(candidates) > MAX_CANDIDATES_PER_EVENT:
        _log.warning(
            "event has %d candidates; the first %d are decided and %d left unread",
            len(candidates),
            MAX_CANDIDATES_PER_EVENT,
            len(candidates) - MAX_CANDIDATES_PER_EVENT,
        )
    return candidates[:MAX_CANDIDATES_PER_EVENT]


def redact_and_extract(
    event: LearningEventView, email: EmailView, redactor: Redactor, extractor: CandidateExtractor
) -> list[Candidate]:
    try:
        return within_limit(extractor.extract(redacted_input(event, email, redactor)))
    except ExtractionSchemaError as exc:
        raise extraction_failure(exc) from None


def redacted_input(event: LearningEventView, email: EmailView, redactor: Redactor) -> ExtractionInput:
    """What the extractor reads: the event's references and its mail and tool summaries, redacted.

    When serving vouches (`event.redacted_by`) that a redactor with this one's fingerprint cleaned
    the event's summaries and its content blob (same detectors, libraries and mode), a second pass
    would remove nothing (redaction is idempotent) and is skipped; otherwise (an older or other
    redactor, a hand-published event) everything is redacted here.
    """
    vouched = bool(event.redacted_by) and event.redacted_by == redactor.fingerprint

    def clean(text: str) -> str:
        return text if vouched else redactor.redact(text).text

    return ExtractionInput(
        event_id=event.event_id,
        trace_id=event.trace_id,
        tenant=event.tenant,
        user=event.user,
        route=event.route,
        tool_outcomes=tuple(
            ToolOutcome(tool=t.tool, status=t.status, ref=t.ref, summary=clean(t.summary)) for t in event.tool_outcomes
        ),
        email=EmailContent(
            from_address=clean(email.from_address),
            to_address=clean(email.to_address),
            subject=clean(email.subject),
            body=clean(email.body),
        ),
        from_owner=email.from_owner,
    )


def extraction_failure(exc: Exception) -> Exception:
    """A schema error is the event's permanent failure (its message names positions and fields only,
    never text); anything else is a bug, retried and then dead-lettered by the consumer."""
    if isinstance(exc, ExtractionSchemaError):
        return PermanentError("EXTRACTION_SCHEMA_ERROR", str(exc), dependency="extractor")
    return exc


async def _decide(event: LearningEventView, candidates: Sequence[Candidate], ports: LearningPorts) -> list[Decision]:
    """One policy decision per candidate, in candidate order (`decide`: policy, conflicts, policy)."""
    proposals = [Proposal(c, user=event.user, route=event.route) for c in candidates]
    return await decide(event.tenant, proposals, policy=ports.policy, conflicts=ports.conflicts)
