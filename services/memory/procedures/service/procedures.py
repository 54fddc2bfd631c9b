"""Learned-procedure use cases (ADR-0102): save-canonical, confirm, deprecate, reads, and the write
path of procedures the learning loop approves in review.

Every write is one unit of work that first takes a transaction-scoped lock on its intent, then
reads the intent's active row FOR UPDATE, plans with the pure domain and writes the plan, its
audit events and (for an idempotent save) its request record together. The intent lock makes
writers of one intent queue instead of colliding; the partial unique index still backs the
one-active rule, and a writer that loses anyway (SupersessionConflict) reruns its whole unit.
Domain errors (InvalidProcedure, ProcedureSuppresses, IllegalTransition) pass through unchanged
for the entrypoint to map, except on the review path, where `save_from_learning` turns them into
a FAILED_PRECONDITION that makes sense to a reviewer.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from services.common.vocabulary import Candidate, normalise_meaning
from services.memory.core.domain.audit import AuditAction
from services.memory.core.service.audit import record_transition
from services.memory.core.service.deps import MemoryPorts, utc_now
from services.memory.core.service.idempotency import fingerprint, remember, replayed
from services.memory.core.service.pagination import Page, PageRequest
from services.memory.core.service.ports import MemoryMetrics, Transition
from services.memory.core.service.retry import retry_on_conflict
from services.memory.procedures.domain.backfill import derive_kind
from services.memory.procedures.domain.errors import (
    InvalidProcedure,
    ProcedureNotAdmissible,
    ProcedureNotFound,
    ProcedureSuppresses,
)
from services.memory.procedures.domain.procedures import (
    INTENT_KEY_PATTERN,
    LearnedProcedure,
    ProcedureSource,
    ProcedureStatus,
    SavePlan,
    SaveProcedure,
    applicable_procedures,
    plan_confirm,
    plan_deprecate,
    plan_save,
    validate_save,
)
from services.memory.procedures.service.ports import ProcedureFilter, ProcedureUnitOfWork

_SAVE_OPERATION = "learned_procedure.save"
_SCAN_BATCH = 200
_TITLE_CHARS = 120


@dataclass(frozen=True)
class ProcedurePorts:
    """What the procedures use cases need; the memory unit of work is a ProcedureUnitOfWork."""

    uow: Callable[[str], ProcedureUnitOfWork]
    metrics: MemoryMetrics
    attempts: int = 6
    clock: Callable[[], datetime] = utc_now

    @classmethod
    def from_memory(cls, ports: MemoryPorts) -> ProcedurePorts:
        return cls(uow=ports.uow, metrics=ports.metrics, attempts=ports.tuning.apply_attempts, clock=ports.clock)


@dataclass(frozen=True)
class DeprecateProcedure:
    """Retire one procedure, named by id or (its active row) by intent key: exactly one is set."""

    tenant: str
    procedure_id: str
    intent_key: str
    reason: str
    actor: str
    trace_id: str = ""


# --- writes ---------------------------------------------------------------------------------------


def save_canonical(
    cmd: SaveProcedure, ports: ProcedurePorts, *, actor: str, request_id: str = "", trace_id: str = ""
) -> SavePlan:
    """Create the intent's canonical rule or supersede the active one, in one transaction.

    Returns the saved row and the row it superseded (None for a first save or a draft). With a
    `request_id`, a repeat returns the first call's rows (as they are now) and writes nothing; the
    same id with a different command is RequestIdReused. May raise InvalidProcedure or
    ProcedureSuppresses before anything is written.
    """
    validate_save(cmd)
    return retry_on_conflict(ports.attempts, ports.metrics, lambda: _save_once(cmd, ports, actor, request_id, trace_id))


def _save_once(cmd: SaveProcedure, ports: ProcedurePorts, actor: str, request_id: str, trace_id: str) -> SavePlan:
    digest = fingerprint(cmd)
    with ports.uow(cmd.tenant) as uow:
        if request_id:
            uow.lock(f"request:{request_id}")
            prior = replayed(uow.requests, request_id, operation=_SAVE_OPERATION, fingerprint=digest)
            if prior is not None:
                return _repeat(uow, prior)
        plan = write_canonical(uow, cmd, transition(ports, actor, request_id, trace_id=trace_id))
        if request_id:
            result = {"procedure": plan.saved.id, "superseded": plan.superseded.id if plan.superseded else ""}
            remember(uow.requests, request_id, operation=_SAVE_OPERATION, fingerprint=digest, result=result)
        uow.commit()
    return plan


def write_canonical(
    uow: ProcedureUnitOfWork, cmd: SaveProcedure, by: Transition, detail: dict[str, Any] | None = None
) -> SavePlan:
    """The one path by which a procedure is saved, inside the caller's unit of work (not committed).

    The old active row is marked superseded (with its forward link; the foreign key is deferred)
    before the new row is inserted, because the one-active index cannot be deferred.
    """
    uow.lock(intent_lock(cmd.intent_key))
    active = uow.procedures.active_for_intent(cmd.intent_key, lock=True)
    plan = plan_save(active, cmd, by.now, str(uuid.uuid4()), uow.procedures.max_version(cmd.intent_key))
    if plan.superseded is not None:
        uow.procedures.update_lifecycle(plan.superseded)
        audit_transition(uow, AuditAction.LEARNED_PROCEDURE_SUPERSEDED, plan.superseded, by)
    uow.procedures.add(plan.saved)
    audit_transition(uow, AuditAction.LEARNED_PROCEDURE_SAVED, plan.saved, by, **(detail or {}))
    return plan


def confirm_procedure(
    tenant: str, procedure_id: str, ports: ProcedurePorts, *, actor: str, trace_id: str = ""
) -> SavePlan:
    """Make a draft the intent's active rule, superseding the current one, in one transaction.

    Raises ProcedureNotFound, IllegalTransition (not a draft) or ProcedureSuppresses (the guard
    runs again at confirm time).
    """

    def once() -> SavePlan:
        with ports.uow(tenant) as uow:
            draft = _locked(uow, procedure_id)
            active = uow.procedures.active_for_intent(draft.intent_key, lock=True)
            by = transition(ports, actor, trace_id=trace_id)
            plan = plan_confirm(draft, active, by.now, uow.procedures.max_version(draft.intent_key))
            if plan.superseded is not None:
                uow.procedures.update_lifecycle(plan.superseded)
                audit_transition(uow, AuditAction.LEARNED_PROCEDURE_SUPERSEDED, plan.superseded, by)
            uow.procedures.update_lifecycle(plan.saved)
            audit_transition(uow, AuditAction.LEARNED_PROCEDURE_CONFIRMED, plan.saved, by)
            uow.commit()
        return plan

    return retry_on_conflict(ports.attempts, ports.metrics, once)


def deprecate_procedure(cmd: DeprecateProcedure, ports: ProcedurePorts) -> LearnedProcedure:
    """Retire an active rule or abandon a draft; the reason is kept in the audit event.

    Raises ProcedureNotFound (no such id, or no active rule for the intent) and IllegalTransition
    for a row already out of operation (superseded or deprecated).
    """
    with ports.uow(cmd.tenant) as uow:
        if cmd.procedure_id:
            target = _locked(uow, cmd.procedure_id)
        else:
            uow.lock(intent_lock(cmd.intent_key))
            found = uow.procedures.active_for_intent(cmd.intent_key, lock=True)
            if found is None:
                raise ProcedureNotFound(f"no active learned procedure for intent {cmd.intent_key!r}")
            target = found
        by = transition(ports, cmd.actor, trace_id=cmd.trace_id)
        plan = plan_deprecate(target, cmd.reason, cmd.actor, by.now)
        uow.procedures.update_lifecycle(plan.deprecated)
        audit_transition(uow, AuditAction.LEARNED_PROCEDURE_DEPRECATED, plan.deprecated, by, reason=plan.reason)
        uow.commit()
    return plan.deprecated


def save_from_learning(
    uow: ProcedureUnitOfWork, candidate: Candidate, *, tenant: str, user: str, review_item_id: str, by: Transition
) -> SavePlan:
    """Write a procedural candidate approved in review through save-canonical, in the review's own
    unit of work, with source sleeptime_consolidation: one path for every procedure (issue 7).

    The intent key is the candidate's when it is a valid procedure key (':' read as '.'), else one
    derived from the text's normalised meaning, so the same approved text always lands on the same
    intent. The text becomes the action; scope and trigger stay empty (it applies to every case),
    and the review, event and user are kept as ids in `details`. Raises ProcedureNotAdmissible
    when the text would suppress scrutiny or breaks a field rule.
    """
    cmd = SaveProcedure(
        tenant=tenant,
        intent_key=learning_intent_key(candidate),
        title=_title(candidate.text),
        kind=derive_kind("", "", candidate.text),
        scope="",
        trigger="",
        action=candidate.text,
        details={"review_item_id": review_item_id, "event_id": candidate.event_id, "user": user},
        created_by=by.actor,
        source=ProcedureSource.SLEEPTIME_CONSOLIDATION,
    )
    try:
        return write_canonical(uow, cmd, by, {"review_item_id": review_item_id})
    except ProcedureSuppresses as exc:
        raise ProcedureNotAdmissible(f"the approved procedure cannot be saved: {exc}", reason="NEVER_SUPPRESS") from exc
    except InvalidProcedure as exc:
        raise ProcedureNotAdmissible(
            f"the approved procedure cannot be saved: {exc}", reason="INVALID_PROCEDURE"
        ) from exc


def learning_intent_key(candidate: Candidate) -> str:
    """The intent a learned candidate is saved under (see `save_from_learning`)."""
    own = candidate.intent_key.strip().lower().replace(":", ".")
    if INTENT_KEY_PATTERN.fullmatch(own):
        return own
    return "learned." + hashlib.sha256(normalise_meaning(candidate.text).encode()).hexdigest()[:16]


# --- reads ----------------------------------------------------------------------------------------


def list_procedures(
    tenant: str, where: ProcedureFilter, page: PageRequest, ports: ProcedurePorts
) -> Page[LearnedProcedure]:
    with ports.uow(tenant) as uow:
        rows = uow.procedures.page(where, after_row_id=page.after, limit=page.size + 1)
    return Page.from_rows(rows, page)


def get_procedure(
    tenant: str, procedure_id: str, ports: ProcedurePorts
) -> tuple[LearnedProcedure, list[LearnedProcedure]]:
    """The procedure and every version of its intent, oldest first (drafts and deprecated included)."""
    with ports.uow(tenant) as uow:
        procedure = uow.procedures.get(procedure_id)
        if procedure is None:
            raise ProcedureNotFound(f"learned procedure {procedure_id} not found")
        return procedure, uow.procedures.of_intents([procedure.intent_key])


def list_applicable(tenant: str, case_scope: str, page: PageRequest, ports: ProcedurePorts) -> Page[LearnedProcedure]:
    """The runtime read: active rules whose scope matches the case, in row order, paged.

    The scope test is the domain's word overlap, not SQL, so active rows are scanned in batches
    after the page key until the page is full; a tenant holds one active row per intent.
    """
    found: list[tuple[int, LearnedProcedure]] = []
    after = page.after
    with ports.uow(tenant) as uow:
        while len(found) <= page.size:
            batch = uow.procedures.page(
                ProcedureFilter(status=ProcedureStatus.ACTIVE), after_row_id=after, limit=_SCAN_BATCH
            )
            found += [(key, p) for key, p in batch if applicable_procedures([p], case_scope)]
            if len(batch) < _SCAN_BATCH:
                break
            after = batch[-1][0]
    return Page.from_rows(found[: page.size + 1], page)


# --- helpers --------------------------------------------------------------------------------------


def intent_lock(intent_key: str) -> str:
    """The transaction lock every writer of an intent takes first (the backfill too)."""
    return f"learned_procedure:{intent_key}"


def transition(ports: ProcedurePorts, actor: str, event_id: str = "", *, trace_id: str = "") -> Transition:
    """Who and what caused a write: the actor, the caller's trace id (from the command) and an event
    id (the request id, or a fresh `op-…` id shared by all audit rows of one transition)."""
    return Transition(event_id=event_id or f"op-{uuid.uuid4().hex}", trace_id=trace_id, actor=actor, now=ports.clock())


def audit_transition(
    uow: ProcedureUnitOfWork, action: AuditAction, procedure: LearnedProcedure, by: Transition, **extra: Any
) -> None:
    """Record one transition: ids, intent, version, status and links only, never rule text."""
    detail: dict[str, Any] = {
        "procedure_id": procedure.id,
        "intent_key": procedure.intent_key,
        "version": procedure.version,
        "status": procedure.status.value,
        "kind": procedure.kind.value,
        "source": procedure.source.value,
    }
    if procedure.supersedes_id:
        detail["supersedes_id"] = procedure.supersedes_id
    if procedure.superseded_by_id:
        detail["superseded_by_id"] = procedure.superseded_by_id
    record_transition(uow.audit, action, procedure.id, by, {**detail, **extra})


def _locked(uow: ProcedureUnitOfWork, procedure_id: str) -> LearnedProcedure:
    """Read a row, take its intent's lock, then re-read it FOR UPDATE (intent lock before row lock,
    the order every writer uses, so two writers never wait on each other crosswise)."""
    seen = uow.procedures.get(procedure_id)
    if seen is None:
        raise ProcedureNotFound(f"learned procedure {procedure_id} not found")
    uow.lock(intent_lock(seen.intent_key))
    locked = uow.procedures.get(procedure_id, lock=True)
    if locked is None:  # pragma: no cover - rows are never deleted by the app role
        raise ProcedureNotFound(f"learned procedure {procedure_id} not found")
    return locked


def _repeat(uow: ProcedureUnitOfWork, result: dict[str, Any]) -> SavePlan:
    saved = uow.procedures.get(str(result["procedure"]))
    if saved is None:  # pragma: no cover - rows are never deleted by the app role
        raise ProcedureNotFound(f"learned procedure {result['procedure']} not found")
    superseded_id = str(result.get("superseded") or "")
    return SavePlan(saved=saved, superseded=uow.procedures.get(superseded_id) if superseded_id else None)


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1].rstrip() + "…"
