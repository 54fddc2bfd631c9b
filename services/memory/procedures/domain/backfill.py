"""The one-time backfill of a tenant's legacy append-only procedures block (ADR-0102 §8), as a plan.

The old tool appended every conversational refinement as a new rule, so one policy became several
competing rules. `plan_backfill` groups them by intent, chains each group into versions 1..n with
supersedes/superseded_by links, and leaves only the latest of each group active. It is pure and
deterministic: row ids are uuid5 over tenant, intent key, saved_at and action, and every timestamp
comes from the block, so a second run plans identical rows and the caller, inserting only ids it
does not already hold, changes nothing.

Grouping rule: two legacy rules are one intent when their scopes have the same content words
(folded, singularised: "PSP merchants" = "psp merchant") *and* their triggers have the same theme.
A theme is the set of concepts a trigger tests, with thresholds reduced to a direction: synonyms
folded ("incorporation", "formed", "registered" → incorporated), numbers, units and filler words
dropped, and "less than 3 months" / "under 90 days" both read as "newly". So "incorporated less than
3 months ago" and "incorporation date under 90 days" are the theme newly_incorporated. Merging needs
agreement, not mere overlap, because the two errors are not symmetric: a wrong split leaves two
active rules, which is the state before the backfill, visible in the list and fixed with one
deprecate; a wrong merge silently retires a rule that still applies (the failure ADR-0102 rejects
semantic auto-merge for). A changed threshold is a refinement of the same intent, not a new one.

Guard: every legacy rule passes the same validation and never-suppress check as a save. A rule that
fails is not imported in any status; it is reported in `BackfillPlan.refused` for an officer to
review, and its group's chain is built from the rules that pass. Where the refused rule was the
latest, the previous passing rule stays active: of the rules the officer wrote, it is the one that
adds scrutiny, which is the fail-closed choice.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from services.memory.procedures.domain.errors import (
    InvalidProcedure,
    ProcedureSuppresses,
)
from services.memory.procedures.domain.procedures import (
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
    SaveProcedure,
    content_words,
    scope_tokens,
    validate_save,
)

BACKFILL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:memloop:learned-procedures:letta-backfill")

_SYNONYMS = {
    **dict.fromkeys(
        ["incorporated", "incorporation", "incorporate", "formed", "formation", "founded", "established",
         "registered", "registration", "inception"],
        "incorporated",
    ),
    **dict.fromkeys(["exception", "exceptions", "waiver", "waivers", "deviation", "deviations"], "exception"),
}  # fmt: skip
_LESS = frozenset({"less", "under", "below", "fewer", "younger", "within", "newer", "lt", "most"})
_MORE = frozenset({"more", "over", "above", "older", "greater", "exceeding", "exceeds", "longer", "gt", "least"})
_NEW = frozenset({"new", "newly", "recent", "recently"})
_UNITS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years"})
_FILLER = frozenset(
    {"a", "an", "the", "any", "all", "every", "each", "of", "to", "for", "in", "on", "with", "and", "or", "is",
     "are", "was", "were", "be", "been", "has", "have", "had", "than", "ago", "date", "age", "old", "its",
     "their", "it", "this", "that", "when", "if", "where", "who", "which", "by", "at", "from", "as", "officer",
     "officers", "analyst", "someone", "since"}
)  # fmt: skip
_GOVERNANCE_ACTION_VERBS = frozenset({"record", "document", "log", "note"})
_GOVERNANCE_ACTION_NOUNS = frozenset({"exception", "approver", "approval", "waiver"})


@dataclass(frozen=True)
class RefusedLegacyRule:
    """A legacy rule left out of the backfill: `reason` is never_suppress, invalid or duplicate."""

    index: int
    reason: str
    detail: str


@dataclass(frozen=True)
class BackfillPlan:
    """Rows to insert (each group's chain in version order) and the legacy rules refused."""

    rows: tuple[LearnedProcedure, ...]
    refused: tuple[RefusedLegacyRule, ...]


@dataclass(frozen=True)
class _Legacy:
    index: int
    saved_at: datetime
    raw_saved_at: str
    scope: str
    trigger: str
    action: str
    rationale: str
    created_by: str | None


def trigger_theme(trigger: str) -> tuple[str, ...]:
    """The concepts a trigger tests, in order, led by a threshold direction (newly/long/low/high).

    "incorporated less than 3 months ago" and "incorporation date under 90 days" both give
    ("newly", "incorporated"); compare themes as sets, since word order is phrasing, not meaning.
    """
    words = content_words(trigger.replace("<", " less than ").replace(">", " more than "))
    has_duration = any(w in _UNITS for w in words)
    if any(w in _NEW for w in words):
        marker = "newly"
    elif any(w in _LESS for w in words):
        marker = "newly" if has_duration else "low"
    elif any(w in _MORE for w in words):
        marker = "long" if has_duration else "high"
    else:
        marker = ""
    skip = _LESS | _MORE | _NEW | _UNITS | _FILLER
    concepts = [_stem(w) for w in words if w not in skip and not w.isdigit()]
    return tuple(dict.fromkeys([marker, *concepts] if marker else concepts))


def derive_kind(scope: str, trigger: str, action: str) -> ProcedureKind:
    """Governance when the rule is about exceptions (scope or trigger) or records one (action: a
    recording verb with exception/approver/approval); everything else is substantive guidance."""
    if "exception" in {_stem(w) for w in content_words(f"{scope} {trigger}")}:
        return ProcedureKind.GOVERNANCE
    acted = {_stem(w) for w in content_words(action)}
    if acted & _GOVERNANCE_ACTION_VERBS and acted & _GOVERNANCE_ACTION_NOUNS:
        return ProcedureKind.GOVERNANCE
    return ProcedureKind.SUBSTANTIVE


def backfill_id(tenant: str, intent_key: str, saved_at: str, action: str) -> str:
    """The deterministic id of a backfilled row, so a repeated backfill plans the same ids."""
    return str(uuid.uuid5(BACKFILL_NAMESPACE, "\x1f".join((tenant, intent_key, saved_at, action))))


def plan_backfill(tenant: str, legacy_rules: Sequence[Mapping[str, object]]) -> BackfillPlan:
    """Plan the rows that replace a legacy block; see the module docstring for grouping and guard.

    Groups are ordered by their first rule and rows within a group by saved_at (then block order),
    so the output is identical for identical input. A saved_at without an offset is read as UTC,
    which is how the legacy tool wrote it.
    """
    refused: list[RefusedLegacyRule] = []
    groups: dict[tuple[frozenset[str], frozenset[str]], list[_Legacy]] = {}
    for index, raw in enumerate(legacy_rules):
        try:
            rule = _parse(index, raw)
        except InvalidProcedure as exc:
            refused.append(RefusedLegacyRule(index, "invalid", str(exc)))
            continue
        key = (scope_tokens(rule.scope), frozenset(trigger_theme(rule.trigger)))
        groups.setdefault(key, []).append(rule)

    rows: list[LearnedProcedure] = []
    used_keys: set[str] = set()
    for key, members in sorted(groups.items(), key=lambda item: _order(item[1])):
        members.sort(key=lambda r: (r.saved_at, r.index))
        intent_key = _intent_key(members[0], used_keys, key)
        admitted: list[tuple[_Legacy, str]] = []
        for rule in members:
            row_id = backfill_id(tenant, intent_key, rule.raw_saved_at, rule.action)
            if any(row_id == seen for _, seen in admitted):
                refused.append(RefusedLegacyRule(rule.index, "duplicate", f"same rule as id {row_id}"))
                continue
            try:
                validate_save(_command(tenant, intent_key, rule))
            except ProcedureSuppresses as exc:
                refused.append(RefusedLegacyRule(rule.index, "never_suppress", str(exc)))
                continue
            except InvalidProcedure as exc:
                refused.append(RefusedLegacyRule(rule.index, "invalid", str(exc)))
                continue
            admitted.append((rule, row_id))
        if admitted:
            latest = admitted[-1][0]
            kind = derive_kind(latest.scope, latest.trigger, latest.action)
            rows.extend(_chain(tenant, intent_key, kind, admitted))
    return BackfillPlan(rows=tuple(rows), refused=tuple(sorted(refused, key=lambda r: r.index)))


def _chain(
    tenant: str, intent_key: str, kind: ProcedureKind, admitted: list[tuple[_Legacy, str]]
) -> list[LearnedProcedure]:
    chain: list[LearnedProcedure] = []
    for position, (rule, row_id) in enumerate(admitted):
        successor = admitted[position + 1] if position + 1 < len(admitted) else None
        chain.append(
            LearnedProcedure(
                id=row_id,
                tenant=tenant,
                intent_key=intent_key,
                title=_title(rule),
                kind=kind,
                scope=rule.scope,
                trigger=rule.trigger,
                action=rule.action,
                rationale=rule.rationale,
                details={"legacy": {"index": rule.index, "saved_at": rule.raw_saved_at}},
                status=ProcedureStatus.SUPERSEDED if successor else ProcedureStatus.ACTIVE,
                version=position + 1,
                supersedes_id=admitted[position - 1][1] if position else None,
                superseded_by_id=successor[1] if successor else None,
                source=ProcedureSource.OFFICER_TEACHING,
                created_by=rule.created_by,
                created_at=rule.saved_at,
                updated_at=successor[0].saved_at if successor else rule.saved_at,
            )
        )
    return chain


def _parse(index: int, raw: Mapping[str, object]) -> _Legacy:
    texts: dict[str, str] = {}
    for name in ("saved_at", "scope", "trigger", "action", "rationale", "created_by"):
        value = raw.get(name, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise InvalidProcedure(name, f"legacy rule {index} has a non-text {name}")
        texts[name] = value.strip()
    try:
        saved_at = datetime.fromisoformat(texts["saved_at"])
    except ValueError:
        raise InvalidProcedure("saved_at", f"legacy rule {index} has no ISO 8601 saved_at") from None
    if saved_at.tzinfo is None:
        saved_at = saved_at.replace(tzinfo=UTC)
    return _Legacy(
        index=index,
        saved_at=saved_at,
        raw_saved_at=texts["saved_at"],
        scope=texts["scope"],
        trigger=texts["trigger"],
        action=texts["action"],
        rationale=texts["rationale"],
        created_by=texts["created_by"] or None,
    )


def _command(tenant: str, intent_key: str, rule: _Legacy) -> SaveProcedure:
    return SaveProcedure(
        tenant=tenant,
        intent_key=intent_key,
        title=_title(rule),
        kind=derive_kind(rule.scope, rule.trigger, rule.action),
        scope=rule.scope,
        trigger=rule.trigger,
        action=rule.action,
        rationale=rule.rationale,
        details={"legacy": {"index": rule.index, "saved_at": rule.raw_saved_at}},
        created_by=rule.created_by,
    )


def _title(rule: _Legacy) -> str:
    title = ": ".join(part for part in (rule.scope, rule.trigger) if part) or rule.action
    return title[:200]


def _order(members: list[_Legacy]) -> tuple[datetime, int]:
    first = min(members, key=lambda r: (r.saved_at, r.index))
    return first.saved_at, first.index


def _intent_key(first: _Legacy, used: set[str], group: tuple[frozenset[str], frozenset[str]]) -> str:
    """scope slug + "." + theme slug, from the group's first rule; a hash suffix only on collision."""
    scope = _slug([w for w in content_words(first.scope) if w not in _FILLER], 60) or "general"
    theme = _slug(list(trigger_theme(first.trigger)), 50) or "always"
    key = f"{scope}.{theme}"
    if key in used:
        digest = hashlib.sha256(repr(sorted(map(sorted, group))).encode()).hexdigest()[:8]
        key = f"{key}_{digest}"
    used.add(key)
    return key


def _slug(words: list[str], limit: int) -> str:
    cleaned = [re.sub(r"[^a-z0-9]", "", w) for w in words]
    return "_".join(w for w in cleaned if w)[:limit].strip("_")


def _stem(word: str) -> str:
    """Crude, deterministic folding for keys only: synonyms, then -ing/-ed/-es/-s."""
    if word in _SYNONYMS:
        return _SYNONYMS[word]
    for suffix, keep in (("ing", 5), ("ed", 4), ("sses", 0), ("ches", 0), ("shes", 0), ("xes", 0), ("s", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            if suffix in {"sses", "ches", "shes", "xes"}:
                return word[:-2]
            if suffix == "s" and word.endswith("ss"):
                return word
            return word[: -len(suffix)]
    return word
