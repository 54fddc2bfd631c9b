"""ApplyLearning: every decision of a learning event, in one transaction, exactly once — and
many events of one tenant in ONE transaction (`apply_learning_batch`, the worker's batches).

Each event is claimed under a transaction-scoped lock on its id, so concurrent deliveries of one
event serialise: the first applies and records the outcome last; every later one finds the
outcome and returns it unchanged, having written nothing. A batch takes all its event locks and
then all its user locks in one sorted order (`event:` before `user:`), so two batches sharing
events or users wait for each other and never deadlock.

An event's refusal (an unsigned decision, a hard rule) is found before anything is read or
written, so it fails only its own item; the others are applied together. A lost one-active race
retries the whole batch's transaction, as it retried the one event's. A single ApplyLearning is
a batch of one: one code path, so nothing can be written twice or differently.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from services.common.errors import MemloopError
from services.common.vocabulary import Decision, Outcome
from services.memory.core.domain.audit import AuditAction, AuditEntry
from services.memory.core.domain.outcome import AppliedDecision, ApplyOutcome, tombstone_outcome
from services.memory.core.domain.review import ReviewItem, ReviewState
from services.memory.core.service.decision_gate import admit
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.ports import CandidateRecord, MemoryUnitOfWork, Transition, Vector
from services.memory.core.service.retry import retry_on_conflict
from services.memory.core.service.storing import NewMemory, store_candidate


@dataclass(frozen=True)
class ApplyLearning:
    """The command: validated decisions of one event for one tenant's user."""

    tenant: str
    user: str
    event_id: str
    trace_id: str
    actor: str
    decisions: tuple[Decision, ...]
    event_time: datetime | None = None
    # The mail's sender-authentication verdict and owner claim, kept in the event's audit entry.
    sender: Mapping[str, str] | None = None


_log = logging.getLogger(__name__)

ItemResult = ApplyOutcome | MemloopError
"""One event's result in a batch: its (stored) outcome, or why it was refused with nothing written."""


@dataclass
class _Written:
    memory_ids: list[str] = field(default_factory=list)
    users: set[str] = field(default_factory=set)
    review_items: list[tuple[str, str, str]] = field(default_factory=list)  # (user, review item, event)


def apply_learning(cmd: ApplyLearning, ports: MemoryPorts) -> ApplyOutcome:
    """Apply or replay one event; returns the stored outcome with `already_processed` set on a replay.

    Raises DecisionNotSigned or HardRuleViolated (PERMISSION_DENIED), before any read or write,
    for a decision policy did not sign or one that would store what memory never stores.
    """
    result = apply_learning_batch([cmd], ports)[0]
    if isinstance(result, MemloopError):
        raise result
    return result


def apply_learning_batch(cmds: Sequence[ApplyLearning], ports: MemoryPorts) -> list[ItemResult]:
    """Apply many events of ONE tenant in one transaction; one result per command, in order.

    A repeated event id in the batch is applied once; its later items return that outcome as a
    replay. Raises (for the whole batch) only what no single event caused: a database outage, or a
    race still lost after `apply_attempts` tries (SupersessionConflict), with nothing written.
    """
    if len({cmd.tenant for cmd in cmds}) > 1:
        raise ValueError("a learning batch belongs to one tenant")
    results: list[ItemResult | None] = [None] * len(cmds)
    admitted: list[tuple[int, ApplyLearning]] = []
    for index, cmd in enumerate(cmds):
        try:
            decisions = admit(cmd.decisions, ports.decisions, tenant=cmd.tenant, user=cmd.user, event_id=cmd.event_id)
        except MemloopError as refused:
            results[index] = refused
            continue
        admitted.append((index, replace(cmd, decisions=tuple(_stamped(d, cmd) for d in decisions))))
    if len(admitted) == 1:
        results[admitted[0][0]] = _apply_committed(admitted, ports)[0]
    elif admitted:
        try:
            outcomes: list[ItemResult] = list(_apply_committed(admitted, ports))
        except MemloopError:  # a race lost `apply_attempts` times: the batch as a whole (ABORTED)
            raise
        except Exception:
            _log.exception("a learning batch of %d events failed; applying each alone", len(admitted))
            outcomes = [_alone(cmd, ports) for _, cmd in admitted]
        for (index, _cmd), outcome in zip(admitted, outcomes, strict=True):
            results[index] = outcome
    return [r if r is not None else MemloopError("event left without a result") for r in results]


def _apply_committed(admitted: list[tuple[int, ApplyLearning]], ports: MemoryPorts) -> list[ApplyOutcome]:
    """Embed, then one transaction (retried whole on a lost race), then the after-commit effects.

    The embedder runs before the transaction, not inside it: a batch must not hold its users'
    locks while the model runs (another batch of the same user would wait for it), and a separate
    ledger read to spare a replay the embedder would cost a transaction of its own. The worker
    asks which events are processed just before, so a replay here is rare (a crash between commit
    and ack); it embeds its texts again and writes nothing.
    """
    vectors: dict[str, Vector] = {}
    _embed_stores([cmd for _, cmd in admitted], ports, vectors)
    outcomes, written = retry_on_conflict(
        ports.tuning.apply_attempts, ports.metrics, lambda: _apply_once([c for _, c in admitted], ports, vectors)
    )
    _after_commit(admitted[0][1].tenant, outcomes, written, ports)
    return outcomes


def _alone(cmd: ApplyLearning, ports: MemoryPorts) -> ItemResult:
    """One event of a failed batch in its own transaction: only the event that caused the failure
    fails (INTERNAL, so the worker retries it and then dead-letters it alone)."""
    try:
        return _apply_committed([(0, cmd)], ports)[0]
    except MemloopError as failed:
        return failed
    except Exception:
        _log.exception("event %s failed alone", cmd.event_id[:64])
        return MemloopError("internal error", reason="INTERNAL")


def _after_commit(tenant: str, outcomes: list[ApplyOutcome], written: _Written, ports: MemoryPorts) -> None:
    for outcome in outcomes:
        if outcome.already_processed:
            ports.metrics.event_repeated()
            continue
        for applied in outcome.applied:
            ports.metrics.decision_applied(applied.outcome.value)
    if written.memory_ids:
        ports.effects.memories_changed(tenant, sorted(written.users), written.memory_ids)
    for user, review_item_id, event_id in written.review_items:
        ports.effects.review_created(tenant, user, review_item_id, event_id)


def _embed_stores(cmds: Sequence[ApplyLearning], ports: MemoryPorts, vectors: dict[str, Vector]) -> None:
    """One embedder call for every STORE text of `cmds` not embedded yet, each distinct text once."""
    texts = sorted(
        {d.candidate.text for cmd in cmds for d in cmd.decisions if d.outcome is Outcome.STORE} - vectors.keys()
    )
    if not texts:
        return
    embedded = ports.embedder.embed(texts, kind="document")
    vectors.update({text: embedded[i] for i, text in enumerate(texts)})


def _apply_once(
    cmds: list[ApplyLearning], ports: MemoryPorts, vectors: dict[str, Vector]
) -> tuple[list[ApplyOutcome], _Written]:
    """One transaction: lock the batch's events and users, read their ledger and deletions once,
    then write each event that is neither applied before nor forgotten."""
    written = _Written()
    outcomes: list[ApplyOutcome] = []
    with ports.uow(cmds[0].tenant) as uow:
        uow.defer_appends()
        # Forget(user) takes the user lock too: learning commits before its ack or not at all. The
        # active records every STORE may meet are locked and read with the ledger, in one go.
        found, forgotten = uow.begin_batch(
            sorted({f"event:{c.event_id}" for c in cmds} | {f"user:{c.user}" for c in cmds}),
            [c.event_id for c in cmds],
            [(c.user, c.event_time) for c in cmds],
            [
                (cmd.user, d.candidate.candidate_key, d.candidate.intent_key)
                for cmd in cmds
                for d in cmd.decisions
                if d.outcome is Outcome.STORE
            ],
        )
        done: dict[str, ApplyOutcome] = {}
        for cmd, forgotten_by in zip(cmds, forgotten, strict=True):
            if cmd.event_id in found:  # applied before (a redelivery): its stored outcome, nothing written
                outcome = ApplyOutcome.from_json(found[cmd.event_id][0], already_processed=True)
            elif cmd.event_id in done:  # the same event twice in this batch: the first one counts
                outcome = replace(done[cmd.event_id], already_processed=True)
            elif forgotten_by is not None:
                outcome = done[cmd.event_id] = _forgotten(uow, cmd, forgotten_by)
            else:
                outcome = done[cmd.event_id] = _apply_event(uow, ports, cmd, vectors, written)
            outcomes.append(outcome)
        if done:  # only replays: nothing to commit, the rollback releases the locks just the same
            uow.commit()
    return outcomes, written


def _apply_event(
    uow: MemoryUnitOfWork,
    ports: MemoryPorts,
    cmd: ApplyLearning,
    vectors: dict[str, Vector],
    written: _Written,
) -> ApplyOutcome:
    by = Transition(
        event_id=cmd.event_id, trace_id=cmd.trace_id, actor=cmd.actor, now=ports.clock(), observed_at=cmd.event_time
    )
    applied = tuple(
        _apply_decision(uow, ports, cmd, ordinal, decision, vectors, by, written)
        for ordinal, decision in enumerate(cmd.decisions)
    )
    outcome = ApplyOutcome(event_id=cmd.event_id, applied=applied)
    uow.events.record(cmd.event_id, user=cmd.user, trace_id=cmd.trace_id, outcome=outcome.to_json())
    detail: dict[str, Any] = dict(Counter(a.outcome.value for a in applied))
    if cmd.sender is not None:
        detail["sender"] = dict(cmd.sender)
    uow.audit.add(AuditEntry(AuditAction.EVENT_PROCESSED, cmd.event_id, cmd.trace_id, cmd.actor, detail=detail))
    return outcome


def _forgotten(uow: MemoryUnitOfWork, cmd: ApplyLearning, deletion_id: str) -> ApplyOutcome:
    """The user asked to forget everything: the event is recorded as processed and nothing is learned."""
    uow.events.record(
        cmd.event_id, user=cmd.user, trace_id=cmd.trace_id, outcome=tombstone_outcome(cmd.event_id, deletion_id)
    )
    detail = {"forgotten_by": deletion_id}
    uow.audit.add(AuditEntry(AuditAction.EVENT_PROCESSED, cmd.event_id, cmd.trace_id, cmd.actor, detail=detail))
    return ApplyOutcome(event_id=cmd.event_id, applied=())


def _apply_decision(
    uow: MemoryUnitOfWork,
    ports: MemoryPorts,
    cmd: ApplyLearning,
    ordinal: int,
    decision: Decision,
    vectors: dict[str, Vector],
    by: Transition,
    written: _Written,
) -> AppliedDecision:
    candidate = decision.candidate
    candidate_id = uuid.uuid4().hex
    if decision.outcome is Outcome.STORE:
        result = store_candidate(
            uow,
            NewMemory.from_decision(cmd.tenant, cmd.user, decision),
            vectors[candidate.text],
            embedder=ports.embedder.name,
            by=by,
        )
        uow.candidates.add(CandidateRecord(candidate_id, cmd.user, ordinal, decision, result.memory.memory_id))
        written.memory_ids.append(result.memory.memory_id)
        written.users.add(cmd.user)
        if result.superseded is not None:
            written.memory_ids.append(result.superseded.memory_id)
        return AppliedDecision(
            candidate_key=candidate.candidate_key,
            outcome=Outcome.STORE,
            memory_id=result.memory.memory_id,
            superseded_memory_id=result.superseded.memory_id if result.superseded is not None else "",
        )
    uow.candidates.add(CandidateRecord(candidate_id, cmd.user, ordinal, decision))
    detail: dict[str, Any] = {
        "candidate_id": candidate_id,
        "policy_version": decision.policy_version,
        "reason_codes": [r.code for r in decision.reasons],
    }
    if decision.outcome is Outcome.REVIEW:
        review_item_id = uuid.uuid4().hex
        uow.reviews.add(
            ReviewItem(
                review_item_id=review_item_id,
                tenant=cmd.tenant,
                user=cmd.user,
                decision=decision,
                state=ReviewState.PENDING,
                event_id=cmd.event_id,
                trace_id=cmd.trace_id,
                candidate_id=candidate_id,
                created_at=by.now,
            )
        )
        detail["review_item_id"] = review_item_id
        uow.audit.add(AuditEntry(AuditAction.REVIEW_CREATED, by.event_id, by.trace_id, by.actor, detail=detail))
        written.review_items.append((cmd.user, review_item_id, cmd.event_id))
        return AppliedDecision(candidate.candidate_key, Outcome.REVIEW, review_item_id=review_item_id)
    uow.audit.add(AuditEntry(AuditAction.CANDIDATE_REJECTED, by.event_id, by.trace_id, by.actor, detail=detail))
    return AppliedDecision(candidate.candidate_key, Outcome.REJECT)


def _stamped(decision: Decision, cmd: ApplyLearning) -> Decision:
    """Candidates carry the event and trace that proposed them (the request's, when left empty)."""
    candidate = replace(
        decision.candidate,
        event_id=decision.candidate.event_id or cmd.event_id,
        trace_id=decision.candidate.trace_id or cmd.trace_id,
    )
    return replace(decision, candidate=candidate)
