"""Learned procedures (ADR-0102) as plain data, and the pure rules of their lifecycle.

A procedure is a compliance rule an officer taught the assistant (scope → trigger → action). Each
intent key has at most one active row; a change is a new row that supersedes the active one, so
history is the superseded chain plus the audit trail, never an edit in place. The functions here
only *plan* writes (rows to insert or rewrite); the service layer applies a plan in one unit of
work and the database's partial unique index backs the one-active-per-intent rule under races.
Standard library only, plus the pure helpers of services.common: the errors here are the shared
error family (`services.common.errors`), so the gRPC edge maps them like every other with no second
mapping layer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from services.common.hidden_text import hidden_text
from services.common.never_suppress import find_suppression
from services.common.vocabulary import normalise_meaning
from services.memory.procedures.domain.errors import (
    IllegalTransition,
    InvalidProcedure,
    LineageConflict,
    ProcedureSuppresses,
)


class ProcedureKind(StrEnum):
    SUBSTANTIVE = "substantive"
    GOVERNANCE = "governance"


class ProcedureStatus(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DEPRECATED = "deprecated"


class ProcedureSource(StrEnum):
    OFFICER_TEACHING = "officer_teaching"
    SLEEPTIME_CONSOLIDATION = "sleeptime_consolidation"


INTENT_KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{1,119}$")
MAX_TEXT_CHARS = 4000
MAX_DETAILS_CHARS = 65_536  # serialised; a guard against unbounded JSON, the ADR's complaint about Letta


@dataclass(frozen=True)
class LearnedProcedure:
    """One row of `learned_procedures`, with the ADR's columns. Immutable: plans return new values."""

    id: str
    tenant: str
    intent_key: str
    title: str
    kind: ProcedureKind
    scope: str
    trigger: str
    action: str
    rationale: str
    details: dict[str, object]
    status: ProcedureStatus
    version: int
    supersedes_id: str | None
    superseded_by_id: str | None
    source: ProcedureSource
    created_by: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class SaveProcedure:
    """The save-canonical command: create or supersede the rule for `intent_key`, or store a draft."""

    tenant: str
    intent_key: str
    title: str
    kind: ProcedureKind
    scope: str
    trigger: str
    action: str
    rationale: str = ""
    details: dict[str, object] = field(default_factory=dict)
    created_by: str | None = None
    source: ProcedureSource = ProcedureSource.OFFICER_TEACHING
    status: ProcedureStatus = ProcedureStatus.ACTIVE


@dataclass(frozen=True)
class SavePlan:
    """What one save or confirm writes, in one transaction.

    `saved` is the new row (plan_save: insert) or the confirmed draft (plan_confirm: update by id).
    `superseded` is the previously active row rewritten with status superseded and its forward
    link, or None. Apply `superseded`'s status change before `saved` becomes active: the partial
    unique index on active rows cannot be deferred. The forward link points at `saved`, so it
    needs a deferrable foreign key or a second update after the insert.
    """

    saved: LearnedProcedure
    superseded: LearnedProcedure | None


@dataclass(frozen=True)
class DeprecatePlan:
    """The row rewritten as deprecated, plus the reason and actor that belong in its audit event."""

    deprecated: LearnedProcedure
    reason: str
    actor: str


def validate_save(command: SaveProcedure) -> None:
    """Raise `InvalidProcedure` on the first broken field rule, then `ProcedureSuppresses` on any
    text that would reduce scrutiny. Pure; the same checks guard backfilled rows."""
    _require_text("tenant", command.tenant)
    _require_text("intent_key", command.intent_key)
    if not INTENT_KEY_PATTERN.fullmatch(command.intent_key):
        raise InvalidProcedure(
            "intent_key", "must be 2-120 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit"
        )
    _require_text("title", command.title)
    _require_text("action", command.action)
    for name, enum in (("kind", ProcedureKind), ("source", ProcedureSource), ("status", ProcedureStatus)):
        try:
            enum(getattr(command, name))
        except ValueError:
            raise InvalidProcedure(name, f"must be one of {', '.join(m.value for m in enum)}") from None
    if command.status not in (ProcedureStatus.DRAFT, ProcedureStatus.ACTIVE):
        raise InvalidProcedure("status", "a save stores either a draft or the active rule")
    texts = {
        "title": command.title,
        "scope": command.scope,
        "trigger": command.trigger,
        "action": command.action,
        "rationale": command.rationale,
        "created_by": command.created_by or "",
    }
    for name, text in texts.items():
        if len(text) > MAX_TEXT_CHARS:
            raise InvalidProcedure(name, f"must be at most {MAX_TEXT_CHARS} characters, got {len(text)}")
    _validate_details(command.details)
    for name, text in (*texts.items(), *_strings(command.details)):
        if (hidden := hidden_text(text)) is not None:
            raise InvalidProcedure(name, f"holds text a reader cannot see ({hidden})")
    _ensure_adds_scrutiny(command.title, command.action, command.rationale, command.details)


def plan_save(
    existing_active: LearnedProcedure | None,
    command: SaveProcedure,
    now: datetime,
    new_id: str,
    max_version: int,
) -> SavePlan:
    """Plan save-canonical: a new row at version `max_version + 1` for the command's intent.

    `existing_active` is the intent's active row, or None; `max_version` is the highest version
    of the intent in any status (0 if none), so a save after a deprecation or a draft still gets a
    fresh number. An active save supersedes `existing_active` with links both ways; a draft
    touches nothing else and links nothing until confirmed. May raise `InvalidProcedure`,
    `ProcedureSuppresses` or `LineageConflict`.
    """
    validate_save(command)
    _require_aware(now)
    _require_text("new_id", new_id)
    if existing_active is not None:
        _require_active_of(existing_active, command.tenant, command.intent_key)
        if new_id == existing_active.id or max_version < existing_active.version:
            raise LineageConflict(f"stale read for {command.intent_key}: new id or max version is behind")
    if max_version < 0:
        raise LineageConflict("max_version must be 0 or more")
    draft = ProcedureStatus(command.status) == ProcedureStatus.DRAFT
    supersedes = None if draft or existing_active is None else existing_active.id
    saved = LearnedProcedure(
        id=new_id,
        tenant=command.tenant,
        intent_key=command.intent_key,
        title=command.title.strip(),
        kind=ProcedureKind(command.kind),
        scope=command.scope.strip(),
        trigger=command.trigger.strip(),
        action=command.action.strip(),
        rationale=command.rationale.strip(),
        details=json.loads(json.dumps(command.details)),
        status=ProcedureStatus(command.status),
        version=max_version + 1,
        supersedes_id=supersedes,
        superseded_by_id=None,
        source=ProcedureSource(command.source),
        created_by=command.created_by,
        created_at=now,
        updated_at=now,
    )
    if draft or existing_active is None:
        return SavePlan(saved=saved, superseded=None)
    return SavePlan(saved=saved, superseded=_supersede(existing_active, saved.id, now))


def plan_confirm(
    draft: LearnedProcedure, existing_active: LearnedProcedure | None, now: datetime, max_version: int
) -> SavePlan:
    """Plan the explicit confirm that makes a draft the active rule, superseding the current one.

    The draft keeps its version unless another version of the intent was written after it, in
    which case it takes `max_version + 1`: an activated row always outnumbers its predecessors.
    The guard runs again, so a draft saved before the guard was tightened cannot slip through.
    """
    _require_aware(now)
    if draft.status != ProcedureStatus.DRAFT:
        raise IllegalTransition(draft.id, draft.status, ProcedureStatus.ACTIVE)
    _ensure_adds_scrutiny(draft.title, draft.action, draft.rationale, draft.details)
    if existing_active is not None:
        _require_active_of(existing_active, draft.tenant, draft.intent_key)
    if max_version < max(draft.version, existing_active.version if existing_active else 0):
        raise LineageConflict(f"stale read for {draft.intent_key}: max version is behind")
    confirmed = replace(
        draft,
        status=ProcedureStatus.ACTIVE,
        version=draft.version if draft.version >= max_version else max_version + 1,
        supersedes_id=existing_active.id if existing_active else None,
        updated_at=now,
    )
    superseded = _supersede(existing_active, draft.id, now) if existing_active else None
    return SavePlan(saved=confirmed, superseded=superseded)


def plan_deprecate(procedure: LearnedProcedure, reason: str, actor: str, now: datetime) -> DeprecatePlan:
    """Plan retiring an active rule or abandoning a draft. Superseded and deprecated rows are
    already out of operation, so deprecating them is an `IllegalTransition`, not a silent no-op."""
    _require_aware(now)
    _require_text("reason", reason)
    _require_text("actor", actor)
    if len(reason) > MAX_TEXT_CHARS:
        raise InvalidProcedure("reason", f"must be at most {MAX_TEXT_CHARS} characters")
    if procedure.status not in (ProcedureStatus.ACTIVE, ProcedureStatus.DRAFT):
        raise IllegalTransition(procedure.id, procedure.status, ProcedureStatus.DEPRECATED)
    deprecated = replace(procedure, status=ProcedureStatus.DEPRECATED, updated_at=now)
    return DeprecatePlan(deprecated=deprecated, reason=reason.strip(), actor=actor.strip())


_SCOPE_STOPWORDS = frozenset(
    {"a", "an", "the", "any", "all", "every", "each", "of", "to", "for", "in", "on", "with", "and", "or"}
)


def scope_tokens(scope: str) -> frozenset[str]:
    """Content words of a scope, folded and crudely singularised ("PSP merchants" ~ "psp merchant")."""
    return frozenset(_singular(w) for w in content_words(scope) if w not in _SCOPE_STOPWORDS)


def content_words(text: str) -> list[str]:
    """Folded alphanumeric words of a text, in order (punctuation, hyphens and underscores split)."""
    return re.findall(r"[^\W_]+", normalise_meaning(text))


def matches_scope(procedure: LearnedProcedure, case_scope: str) -> bool:
    """Whether a procedure applies to a case: any shared scope word, an empty case scope, or a
    procedure with no scope. Deliberately generous, since surfacing one extra rule to an officer
    is cheaper than hiding one that applies."""
    wanted = scope_tokens(case_scope)
    own = scope_tokens(procedure.scope)
    return not wanted or not own or bool(wanted & own)


def applicable_procedures(procedures: Iterable[LearnedProcedure], case_scope: str) -> list[LearnedProcedure]:
    """The runtime read: only active rules operate, and only those whose scope matches the case."""
    return [p for p in procedures if p.status == ProcedureStatus.ACTIVE and matches_scope(p, case_scope)]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _require_text(name: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidProcedure(name, "must not be empty")


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise InvalidProcedure("now", "timestamps must be timezone-aware")


def _require_active_of(row: LearnedProcedure, tenant: str, intent_key: str) -> None:
    if row.tenant != tenant or row.intent_key != intent_key or row.status != ProcedureStatus.ACTIVE:
        raise LineageConflict(f"row {row.id} is not the active rule of {intent_key} for this tenant")


def _supersede(previous: LearnedProcedure, successor_id: str, now: datetime) -> LearnedProcedure:
    return replace(previous, status=ProcedureStatus.SUPERSEDED, superseded_by_id=successor_id, updated_at=now)


def _validate_details(details: object) -> None:
    """Details must be a JSON object that survives a round trip unchanged (no tuples, sets, NaN,
    non-string keys), because JSONB would silently rewrite anything else."""
    if not isinstance(details, dict):
        raise InvalidProcedure("details", "must be a JSON object")
    try:
        encoded = json.dumps(details, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidProcedure("details", f"must be JSON-serialisable: {exc}") from None
    if json.loads(encoded) != details:
        raise InvalidProcedure("details", "must round-trip through JSON unchanged (string keys, lists not tuples)")
    if len(encoded) > MAX_DETAILS_CHARS:
        raise InvalidProcedure("details", f"must serialise to at most {MAX_DETAILS_CHARS} characters")


def _ensure_adds_scrutiny(title: str, action: str, rationale: str, details: dict[str, object]) -> None:
    """Fail closed on every text an officer reads as guidance: the action above all, but also the
    title, the rationale and every string inside details (approved alternatives, note fields).
    Scope and trigger are conditions, where negation is ordinary ("not yet incorporated"), so they
    are left to the action's check."""
    for name, text in (("action", action), ("title", title), ("rationale", rationale), *_strings(details)):
        match = find_suppression(text)
        if match is not None:
            raise ProcedureSuppresses(name, match)


def _strings(value: object, path: str = "details") -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [item for key, inner in value.items() for item in _strings(inner, f"{path}.{key}")]
    if isinstance(value, list):
        return [item for k, inner in enumerate(value) for item in _strings(inner, f"{path}[{k}]")]
    return []
