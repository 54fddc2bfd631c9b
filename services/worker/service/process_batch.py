"""The learning use case for a batch of events: `process_event`'s steps, one call per batch
where the peers allow it.

Per tenant of the batch (every peer call is scoped to one tenant):

1. memory: which events are already processed — one call;
2. serving: every remaining event's content — one call; a blob that is missing or was forgotten
   fails only its own event;
3. redaction of every event, then extraction of all of them in one extractor call (the learned
   extractor embeds the batch's sentences in one model call), in one hop off the event loop; an
   extraction error fails only its own event;
4-5. policy, then memory's conflicts, then policy again (`services.worker.service.decide`): one
   policy call for every candidate, one FindConflicts for those it did not reject, and one more
   policy call only for those memory found conflicts for. Each decision is signed for its own user
   and event exactly as before, so memory verifies each one;
6. memory: every ready event applied in one BatchApplyLearning (`apply_batch`), one transaction
   for the lot; each event still has its own result (memory refuses an event alone, and a
   replay of an event returns its stored outcome), so each message is settled by its own.

A failure of a shared call is the failure of every event that needed it: a transient one is
retried by the consumer per event, as if each had failed alone. A permanent one (the peer
refused the request as a whole, e.g. one event's field over a limit) does not say which event
caused it, so that tenant's events fall back to the one-event path one by one (`prepare_event`,
`apply_prepared`): the culprit fails alone.
Events of one user in one batch are decided against memory's state before the batch, as concurrent
deliveries were before batching; memory's apply keeps one active record per intent in any order.
Nothing but step 6 writes anything, and it commits in one transaction, so a crash leaves nothing to undo.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.common.redaction import Redactor
from services.common.vocabulary import Candidate
from services.worker.domain.extraction import CandidateExtractor, ExtractionInput
from services.worker.service.decide import Proposal, decide
from services.worker.service.model import (
    ApplyOutcome,
    ApplyRequest,
    EmailView,
    LearningEventView,
    PermanentError,
    ProcessResult,
    WorkerError,
)
from services.worker.service.process_event import (
    LearningPorts,
    Prepared,
    ReadyToApply,
    apply_prepared,
    check_owner,
    extraction_failure,
    prepare_event,
    redacted_input,
    within_limit,
)


async def prepare_batch(
    events: Sequence[LearningEventView],
    ports: LearningPorts,
    *,
    redactor: Redactor,
    extractor: CandidateExtractor,
) -> list[Prepared]:
    """Steps 1-5 for every event, in event order: ready to apply, final, or the event's failure.

    Never raises for an event's failure (bar cancellation): each event's outcome is its own item.
    """
    by_tenant: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        by_tenant.setdefault(event.tenant, []).append(index)
    prepared: list[Prepared] = [PermanentError("NOT_PREPARED")] * len(events)
    groups = list(by_tenant.items())
    results = await asyncio.gather(
        *(_prepare_tenant(t, [events[i] for i in indexes], ports, redactor, extractor) for t, indexes in groups)
    )
    for (_tenant, indexes), outcomes in zip(groups, results, strict=True):
        for index, outcome in zip(indexes, outcomes, strict=True):
            prepared[index] = outcome
    return prepared


@dataclass
class _Slot:
    """One event on its way through the shared steps; `outcome` is set once it is final."""

    event: LearningEventView
    outcome: Prepared | None = None
    email: EmailView | None = None
    candidates: list[Candidate] = field(default_factory=list)


async def _prepare_tenant(
    tenant: str,
    events: list[LearningEventView],
    ports: LearningPorts,
    redactor: Redactor,
    extractor: CandidateExtractor,
) -> list[Prepared]:
    slots = [_Slot(event) for event in events]
    try:
        await _shared_steps(tenant, slots, ports, redactor, extractor)
    except PermanentError:
        # The peer refused a batch request as a whole: one event at a time isolates the one it refused.
        pending = _open(slots)
        alone = await asyncio.gather(
            *(prepare_event(s.event, ports, redactor=redactor, extractor=extractor) for s in pending),
            return_exceptions=True,
        )
        for slot, outcome in zip(pending, alone, strict=True):
            slot.outcome = outcome
    except Exception as exc:  # transient (or a bug): every event still waiting for the call failed with it
        for slot in _open(slots):
            slot.outcome = exc
    return [slot.outcome if slot.outcome is not None else _unprepared(slot) for slot in slots]


def _unprepared(slot: _Slot) -> Prepared:  # pragma: no cover - every path above sets an outcome
    return PermanentError("NOT_PREPARED", f"event {slot.event.event_id[:64]} left without an outcome")


def _open(slots: list[_Slot]) -> list[_Slot]:
    return [slot for slot in slots if slot.outcome is None]


async def _shared_steps(
    tenant: str, slots: list[_Slot], ports: LearningPorts, redactor: Redactor, extractor: CandidateExtractor
) -> None:
    processed = await ports.memory.processed_among(tenant, [s.event.event_id for s in slots])
    for slot in slots:
        if slot.event.event_id in processed:
            slot.outcome = ProcessResult(event_id=slot.event.event_id, already_processed=True)
    pending = _open(slots)
    if not pending:
        return
    emails = await ports.content.read_many(tenant, list(dict.fromkeys(s.event.content_ref for s in pending)))
    for slot in pending:
        found = emails.get(slot.event.content_ref)
        if found is None:
            slot.outcome = PermanentError("CONTENT_NOT_FOUND", "missing from the batch answer", dependency="serving")
        elif isinstance(found, WorkerError):
            slot.outcome = found
        else:
            try:
                slot.email = check_owner(slot.event, found)
            except PermanentError as mismatch:
                slot.outcome = mismatch
    # Redaction and extraction are CPU work: one hop off the event loop for the whole batch.
    await asyncio.to_thread(_extract_all, _open(slots), redactor, extractor)
    await _decide_all(tenant, _open(slots), ports)


def _extract_all(slots: list[_Slot], redactor: Redactor, extractor: CandidateExtractor) -> None:
    """Redact each event, then extract them all in one extractor call (one model call for the batch)."""
    readable: list[tuple[_Slot, ExtractionInput]] = []
    for slot in slots:
        assert slot.email is not None
        try:
            readable.append((slot, redacted_input(slot.event, slot.email, redactor)))
        except Exception as exc:  # a bug in redaction: this event's failure alone
            slot.outcome = exc
    results = extractor.extract_many([extraction for _, extraction in readable])
    for (slot, _), result in zip(readable, results, strict=True):
        if isinstance(result, Exception):
            slot.outcome = extraction_failure(result)
        elif result:
            slot.candidates = within_limit(result)
        else:
            slot.outcome = ReadyToApply(slot.event, ())


async def _decide_all(tenant: str, slots: list[_Slot], ports: LearningPorts) -> None:
    """Every candidate of the batch decided in one pass of `decide` (policy, conflicts, policy)."""
    if not slots:
        return
    proposals = [
        Proposal(candidate, user=slot.event.user, route=slot.event.route)
        for slot in slots
        for candidate in slot.candidates
    ]
    decisions = iter(await decide(tenant, proposals, policy=ports.policy, conflicts=ports.conflicts))
    for slot in slots:
        slot.outcome = ReadyToApply(slot.event, tuple(next(decisions) for _ in slot.candidates))


async def apply_batch(ready: Sequence[ReadyToApply], ports: LearningPorts) -> list[ProcessResult | BaseException]:
    """Step 6: one BatchApplyLearning per tenant of `ready`; one result per event, in order.

    Never raises for an event's failure (bar cancellation). Each result stands for memory's commit
    of that event (or its stored outcome), so the caller may settle each message by its own.
    """
    by_tenant: dict[str, list[int]] = {}
    for index, item in enumerate(ready):
        by_tenant.setdefault(item.event.tenant, []).append(index)
    results: list[ProcessResult | BaseException] = [PermanentError("NOT_APPLIED")] * len(ready)
    groups = list(by_tenant.items())
    applied = await asyncio.gather(
        *(_apply_tenant(tenant, [ready[i] for i in indexes], ports) for tenant, indexes in groups)
    )
    for (_tenant, indexes), outcomes in zip(groups, applied, strict=True):
        for index, outcome in zip(indexes, outcomes, strict=True):
            results[index] = outcome
    return results


async def _apply_tenant(
    tenant: str, ready: list[ReadyToApply], ports: LearningPorts
) -> list[ProcessResult | BaseException]:
    requests = [
        ApplyRequest(
            event_id=r.event.event_id,
            trace_id=r.event.trace_id,
            user=r.event.user,
            decisions=r.decisions,
            event_time=r.event.commit_time,
            sender=r.event.sender,
        )
        for r in ready
    ]
    try:
        outcomes: list[ApplyOutcome | WorkerError] = await ports.memory.apply_many(tenant, requests)
    except PermanentError:
        # Memory refused the batch as a whole: one event per call isolates the one it refused.
        return list(await asyncio.gather(*(apply_prepared(r, ports) for r in ready), return_exceptions=True))
    except Exception as exc:  # transient (or a bug): every event of the call failed with it, nothing committed
        return [exc] * len(ready)
    return [
        outcome
        if isinstance(outcome, WorkerError)
        else ProcessResult(
            event_id=r.event.event_id, already_processed=outcome.already_processed, decisions=r.decisions
        )
        for r, outcome in zip(ready, outcomes, strict=True)
    ]
