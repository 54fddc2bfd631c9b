"""The one-time, idempotent backfill of a legacy append-only procedures block (ADR-0102 §8).

The domain plans the rows (deterministic ids, chains, one active per intent); this use case
applies the plan in one transaction, holding every touched intent's lock (in sorted order, the
order no other writer can cross), and inserts only what is missing:

- an intent whose planned rows are all present was backfilled before: counted, untouched;
- an intent with no rows at all gets its whole chain, each row audited `learned_procedure.backfilled`;
- an intent the governed store already holds otherwise (an officer saved it since, or the block
  differs from the one imported earlier) is left alone: the store is newer than the retired
  block, and inserting a second chain would compete with its active row. Its missing rules are
  reported back as refused with reason `intent_held`, next to the domain's own refusals
  (never_suppress, invalid, duplicate), so nothing is dropped silently.

Running it twice inserts nothing the second time and returns the same counts and active rows.
`validate_only` (the console's preview) runs the very same transaction and rolls it back, so the
preview and the apply cannot disagree about what would happen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from services.memory.core.domain.audit import AuditAction
from services.memory.core.service.retry import retry_on_conflict
from services.memory.procedures.domain.backfill import BackfillPlan, RefusedLegacyRule, plan_backfill
from services.memory.procedures.domain.procedures import LearnedProcedure, ProcedureStatus
from services.memory.procedures.service.procedures import ProcedurePorts, audit_transition, intent_lock, transition

INTENT_HELD = "intent_held"


@dataclass(frozen=True)
class BackfillResult:
    """What one backfill call did and left: counts, the active rows of its intents, the refusals."""

    inserted: int
    already_present: int
    active: tuple[LearnedProcedure, ...]
    refused: tuple[RefusedLegacyRule, ...]


def backfill_procedures(
    tenant: str,
    legacy_rules: Sequence[Mapping[str, object]],
    ports: ProcedurePorts,
    *,
    actor: str,
    trace_id: str = "",
    validate_only: bool = False,
) -> BackfillResult:
    """Import `legacy_rules` (in the order they were appended) for `tenant`; see the module doc."""
    plan = plan_backfill(tenant, legacy_rules)
    return retry_on_conflict(
        ports.attempts,
        ports.metrics,
        lambda: _backfill_once(tenant, plan, ports, actor, trace_id, commit=not validate_only),
    )


def _backfill_once(
    tenant: str, plan: BackfillPlan, ports: ProcedurePorts, actor: str, trace_id: str, *, commit: bool
) -> BackfillResult:
    chains: dict[str, list[LearnedProcedure]] = {}
    for row in plan.rows:
        chains.setdefault(row.intent_key, []).append(row)
    inserted, present, refused = 0, 0, list(plan.refused)
    with ports.uow(tenant) as uow:
        for intent_key in sorted(chains):
            uow.lock(intent_lock(intent_key))
        stored = uow.procedures.of_intents(chains)
        stored_ids = {p.id for p in stored}
        by = transition(ports, actor, trace_id=trace_id)
        for intent_key, chain in chains.items():
            held = [p for p in stored if p.intent_key == intent_key]
            missing = [row for row in chain if row.id not in stored_ids]
            present += len(chain) - len(missing)
            if not missing:
                continue
            if held:
                refused += [_held(row, held) for row in missing]
                continue
            for row in chain:  # version order; forward links resolve at commit (deferred FK)
                uow.procedures.add(row)
                audit_transition(uow, AuditAction.LEARNED_PROCEDURE_BACKFILLED, row, by, legacy_index=_index(row))
            inserted += len(chain)
        active = tuple(p for p in uow.procedures.of_intents(chains) if p.status is ProcedureStatus.ACTIVE)
        if commit:
            uow.commit()
    return BackfillResult(inserted, present, active, tuple(sorted(refused, key=lambda r: r.index)))


def _held(row: LearnedProcedure, held: list[LearnedProcedure]) -> RefusedLegacyRule:
    active = next((p for p in held if p.status is ProcedureStatus.ACTIVE), held[-1])
    return RefusedLegacyRule(
        _index(row),
        INTENT_HELD,
        f"intent {row.intent_key!r} is already held by learned procedure {active.id} (version {active.version})",
    )


def _index(row: LearnedProcedure) -> int:
    """The rule's position in the legacy block, which the domain keeps in `details.legacy.index`."""
    legacy = row.details.get("legacy")
    index = legacy.get("index") if isinstance(legacy, dict) else None
    return int(index) if isinstance(index, int | float) else -1
