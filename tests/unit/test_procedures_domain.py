"""The learned-procedures lifecycle (ADR-0102) as pure planning: save, supersede, draft, deprecate, read."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from services.common.errors import InvalidArgument
from services.memory.procedures.domain.errors import (
    IllegalTransition,
    InvalidProcedure,
    LineageConflict,
    ProcedureSuppresses,
)
from services.memory.procedures.domain.procedures import (
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
    SavePlan,
    SaveProcedure,
    applicable_procedures,
    matches_scope,
    plan_confirm,
    plan_deprecate,
    plan_save,
)

T0 = datetime(2026, 7, 7, 9, 0, tzinfo=UTC)


def random_ref(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def a_command(tenant: str, /, **overrides: object) -> SaveProcedure:
    fields: dict[str, object] = {
        "tenant": tenant,
        "intent_key": "psp_merchants.newly_incorporated",
        "title": "Newly incorporated PSP merchants",
        "kind": ProcedureKind.SUBSTANTIVE,
        "scope": "PSP merchants",
        "trigger": "incorporated less than 3 months ago",
        "action": "request 3 months of bank statements",
        "rationale": "thin trading history",
        "created_by": "officer.kim",
    }
    fields.update(overrides)
    return SaveProcedure(**fields)  # type: ignore[arg-type]


class Table:
    """The rows of one tenant as the service layer would leave them after applying plans."""

    def __init__(self) -> None:
        self.rows: dict[str, LearnedProcedure] = {}

    def apply(self, plan: SavePlan) -> LearnedProcedure:
        if plan.superseded is not None:
            self.rows[plan.superseded.id] = plan.superseded
        self.rows[plan.saved.id] = plan.saved
        assert len(self.active(plan.saved.intent_key)) <= 1, "the partial unique index would refuse this"
        return plan.saved

    def active(self, intent_key: str) -> list[LearnedProcedure]:
        return [r for r in self.rows.values() if r.intent_key == intent_key and r.status is ProcedureStatus.ACTIVE]

    def active_one(self, intent_key: str) -> LearnedProcedure | None:
        found = self.active(intent_key)
        return found[0] if found else None

    def max_version(self, intent_key: str) -> int:
        return max((r.version for r in self.rows.values() if r.intent_key == intent_key), default=0)

    def save(self, command: SaveProcedure, now: datetime) -> LearnedProcedure:
        key = command.intent_key
        plan = plan_save(self.active_one(key), command, now, random_ref("proc"), self.max_version(key))
        return self.apply(plan)


# --- create, supersede, draft, deprecate ---------------------------------------------------------


def test_create_plans_version_one_active_without_links() -> None:
    # given a tenant with no rule for the intent
    tenant = random_ref("tenant")
    # when a rule is saved
    plan = plan_save(None, a_command(tenant, title="  Newly incorporated PSPs  "), T0, "proc-1", 0)
    # then one active row at version 1 is planned, trimmed, and nothing is superseded
    assert plan.superseded is None
    saved = plan.saved
    assert (saved.id, saved.status, saved.version) == ("proc-1", ProcedureStatus.ACTIVE, 1)
    assert (saved.supersedes_id, saved.superseded_by_id) == (None, None)
    assert saved.title == "Newly incorporated PSPs"
    assert saved.source is ProcedureSource.OFFICER_TEACHING
    assert saved.created_at == saved.updated_at == T0


def test_updates_build_a_superseded_chain_with_versions_one_two_three() -> None:
    # given a tenant teaching one intent three times
    tenant, table = random_ref("tenant"), Table()
    actions = [
        "request 3 months of bank statements",
        "request 3 months of bank statements or a signed processor history",
        "request bank statements or processor history; escalate if neither within 10 days",
    ]
    # when each version is saved
    saved = [table.save(a_command(tenant, action=a), T0 + timedelta(minutes=k)) for k, a in enumerate(actions)]
    # then versions are 1, 2, 3, only the last is active, and links run both ways
    first, second, third = (table.rows[r.id] for r in saved)
    assert [r.version for r in (first, second, third)] == [1, 2, 3]
    assert [r.status for r in (first, second, third)] == [ProcedureStatus.SUPERSEDED] * 2 + [ProcedureStatus.ACTIVE]
    assert (first.supersedes_id, first.superseded_by_id) == (None, second.id)
    assert (second.supersedes_id, second.superseded_by_id) == (first.id, third.id)
    assert (third.supersedes_id, third.superseded_by_id) == (second.id, None)
    assert second.updated_at == T0 + timedelta(minutes=2)


def test_a_draft_leaves_the_active_rule_alone_until_confirmed() -> None:
    # given an active rule
    tenant, table = random_ref("tenant"), Table()
    active = table.save(a_command(tenant), T0)
    # when a draft of the same intent is saved
    draft = table.save(a_command(tenant, action="request 6 months of bank statements", status="draft"), T0)
    # then it is stored as a draft at the next version, linked to nothing, and the rule still operates
    assert (draft.status, draft.version, draft.supersedes_id) == (ProcedureStatus.DRAFT, 2, None)
    assert table.active_one(draft.intent_key) == active
    # when the officer confirms it
    key = draft.intent_key
    confirmed = table.apply(plan_confirm(draft, table.active_one(key), T0, table.max_version(key)))
    # then it is the active rule and supersedes the previous one
    assert (confirmed.id, confirmed.status, confirmed.version) == (draft.id, ProcedureStatus.ACTIVE, 2)
    assert confirmed.supersedes_id == active.id
    assert table.rows[active.id].status is ProcedureStatus.SUPERSEDED
    assert table.rows[active.id].superseded_by_id == draft.id


def test_a_confirmed_draft_outnumbers_versions_written_after_it() -> None:
    # given a draft at version 2, then a direct save at version 3
    tenant, table = random_ref("tenant"), Table()
    table.save(a_command(tenant), T0)
    draft = table.save(a_command(tenant, status=ProcedureStatus.DRAFT), T0)
    third = table.save(a_command(tenant, action="request 4 months of bank statements"), T0)
    # when the older draft is confirmed
    key = draft.intent_key
    confirmed = table.apply(plan_confirm(draft, table.active_one(key), T0, table.max_version(key)))
    # then it takes version 4 and supersedes version 3
    assert (confirmed.version, confirmed.supersedes_id) == (4, third.id)


def test_only_a_draft_can_be_confirmed() -> None:
    # given an active rule
    row = plan_save(None, a_command(random_ref("tenant")), T0, "proc-1", 0).saved
    # when it is confirmed
    with pytest.raises(IllegalTransition) as refused:
        plan_confirm(row, None, T0, 1)
    # then the transition is refused, naming both states
    assert (refused.value.current, refused.value.wanted) == (ProcedureStatus.ACTIVE, ProcedureStatus.ACTIVE)


def test_deprecate_retires_the_active_rule_and_a_later_save_starts_a_fresh_version() -> None:
    # given an active rule at version 2
    tenant, table = random_ref("tenant"), Table()
    table.save(a_command(tenant), T0)
    active = table.save(a_command(tenant, action="request 6 months of bank statements"), T0)
    # when it is deprecated
    plan = plan_deprecate(active, "  policy withdrawn ", "officer.lee", T0 + timedelta(days=1))
    table.rows[active.id] = plan.deprecated
    # then nothing is active, the reason and actor are kept for the audit event
    assert plan.deprecated.status is ProcedureStatus.DEPRECATED
    assert plan.deprecated.updated_at == T0 + timedelta(days=1)
    assert (plan.reason, plan.actor) == ("policy withdrawn", "officer.lee")
    assert table.active(active.intent_key) == []
    # and a new save is version 3 with no back link
    fresh = table.save(a_command(tenant), T0 + timedelta(days=2))
    assert (fresh.version, fresh.supersedes_id) == (3, None)


@pytest.mark.parametrize("status", [ProcedureStatus.SUPERSEDED, ProcedureStatus.DEPRECATED])
def test_retired_rows_cannot_be_deprecated(status: ProcedureStatus) -> None:
    # given a row that no longer operates
    row = replace(plan_save(None, a_command(random_ref("tenant")), T0, "proc-1", 0).saved, status=status)
    # when it is deprecated
    with pytest.raises(IllegalTransition):
        plan_deprecate(row, "cleanup", "officer.lee", T0)
    # then the transition is refused (asserted by the raise)


def test_a_draft_can_be_abandoned_and_deprecation_needs_a_reason() -> None:
    # given a draft
    draft = plan_save(None, a_command(random_ref("tenant"), status="draft"), T0, "proc-1", 0).saved
    # when it is deprecated without and with a reason
    with pytest.raises(InvalidProcedure) as missing:
        plan_deprecate(draft, " ", "officer.lee", T0)
    plan = plan_deprecate(draft, "officer abandoned the draft", "officer.lee", T0)
    # then the empty reason names its field and the draft is retired
    assert missing.value.field == "reason"
    assert plan.deprecated.status is ProcedureStatus.DEPRECATED


@pytest.mark.parametrize(
    ("existing_overrides", "max_version"),
    [
        ({"intent_key": "other.intent"}, 1),
        ({"tenant": "someone-else"}, 1),
        ({"status": ProcedureStatus.SUPERSEDED}, 1),
        ({}, 0),
    ],
)
def test_a_stale_or_foreign_read_is_a_lineage_conflict(existing_overrides: dict[str, object], max_version: int) -> None:
    # given an "active" row that does not fit the command, or a max version behind it
    tenant = random_ref("tenant")
    existing = replace(plan_save(None, a_command(tenant), T0, "proc-1", 0).saved, **existing_overrides)  # type: ignore[arg-type]
    # when a save is planned on it
    with pytest.raises(LineageConflict):
        plan_save(existing, a_command(tenant), T0, "proc-2", max_version)
    # then it is refused rather than linking the wrong rows (asserted by the raise)


def test_timestamps_must_be_timezone_aware() -> None:
    # given a naive clock reading
    naive = datetime(2026, 7, 7, 9, 0)
    # when a save is planned
    with pytest.raises(InvalidProcedure, match="timezone-aware"):
        plan_save(None, a_command(random_ref("tenant")), naive, "proc-1", 0)
    # then it is refused (asserted by the raise)


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"tenant": ""}, "tenant"),
        ({"intent_key": ""}, "intent_key"),
        ({"intent_key": "PSP Merchants"}, "intent_key"),
        ({"intent_key": "a"}, "intent_key"),
        ({"intent_key": "_psp"}, "intent_key"),
        ({"intent_key": "p" * 121}, "intent_key"),
        ({"title": "   "}, "title"),
        ({"action": ""}, "action"),
        ({"kind": "bogus"}, "kind"),
        ({"source": "letta"}, "source"),
        ({"status": ProcedureStatus.SUPERSEDED}, "status"),
        ({"scope": "x" * 4001}, "scope"),
        ({"trigger": "x" * 4001}, "trigger"),
        ({"rationale": "x" * 4001}, "rationale"),
        ({"details": {"tiers": {"team lead", "mlro"}}}, "details"),
        ({"details": {"alternatives": ("bank statements", "processor history")}}, "details"),
        ({"details": {"ratio": float("nan")}}, "details"),
        ({"details": {1: "numeric key"}}, "details"),
        ({"details": ["not", "an", "object"]}, "details"),
        ({"details": {"blob": "x" * 70_000}}, "details"),
    ],
)
def test_validation_errors_name_the_field(overrides: dict[str, object], field: str) -> None:
    # given a command that breaks one field rule
    command = a_command(random_ref("tenant"), **overrides)
    # when it is planned
    with pytest.raises(InvalidProcedure) as invalid:
        plan_save(None, command, T0, "proc-1", 0)
    # then the error names that field
    assert invalid.value.field == field


def test_boundary_values_are_accepted() -> None:
    # given the longest intent key and texts the rules allow, and rich JSON details
    details: dict[str, object] = {"alternatives": ["signed processor history"], "approver": {"min_tier": 2}}
    command = a_command(random_ref("tenant"), intent_key="p" * 120, scope="x" * 4000, details=details)
    # when it is planned
    plan = plan_save(None, command, T0, "proc-1", 0)
    # then it is stored as given, with details copied rather than shared
    assert plan.saved.intent_key == "p" * 120
    assert plan.saved.details == details
    assert plan.saved.details is not details


# --- never-suppress guard ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field", "rule"),
    [
        ({"action": "skip sanctions screening for PSP merchants"}, "action", "skip_screening"),
        ({"action": "do not escalate adverse media hits"}, "action", "no_escalation"),
        ({"title": "Waive the PEP check for long-standing clients"}, "title", "waive_check"),
        ({"rationale": "SAR filing is not required for small amounts"}, "rationale", "no_report"),
        ({"details": {"alternatives": ["auto-clear screening alerts"]}}, "details.alternatives[0]", "auto_clear"),
    ],
)
def test_the_guard_refuses_suppression_naming_field_and_rule(
    overrides: dict[str, object], field: str, rule: str
) -> None:
    # given a command whose guidance would reduce scrutiny
    command = a_command(random_ref("tenant"), **overrides)
    # when it is planned
    with pytest.raises(ProcedureSuppresses) as refused:
        plan_save(None, command, T0, "proc-1", 0)
    # then it is refused as a never-suppress violation naming the field and the rule
    assert isinstance(refused.value, InvalidArgument)
    assert refused.value.reason == "NEVER_SUPPRESS"
    assert (refused.value.field, refused.value.match.rule) == (field, rule)
    assert str(refused.value).startswith(f"{field}: ")


@pytest.mark.parametrize(
    "action",
    [
        "escalate if screening finds a match",
        "never skip the sanctions check",
        "record a structured exception note with reason, approver and expiry",
    ],
)
def test_the_guard_admits_added_scrutiny(action: str) -> None:
    # given an action that adds scrutiny while mentioning screening
    command = a_command(random_ref("tenant"), action=action)
    # when it is planned
    plan = plan_save(None, command, T0, "proc-1", 0)
    # then it is saved active
    assert plan.saved.status is ProcedureStatus.ACTIVE


def test_confirm_runs_the_guard_again() -> None:
    # given a draft row holding a suppressing action (stored before the guard knew the phrasing)
    draft = plan_save(None, a_command(random_ref("tenant"), status="draft"), T0, "proc-1", 0).saved
    draft = replace(draft, action="treat screening matches as false positives")
    # when it is confirmed
    with pytest.raises(ProcedureSuppresses) as refused:
        plan_confirm(draft, None, T0, 1)
    # then it is refused and stays a draft
    assert refused.value.match.rule == "false_positive"


# --- runtime reads -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("procedure_scope", "case_scope", "expected"),
    [
        ("PSP merchants", "psp merchant onboarding", True),
        ("PSP merchants", "PSP-MERCHANTS", True),
        ("PSP merchants", "", True),
        ("", "marketplace sellers", True),
        ("any exception to a documentation requirement", "documentation exception", True),
        ("PSP merchants", "private banking clients", False),
        ("any exception to a documentation requirement", "any PEP client", False),
    ],
)
def test_matches_scope_on_shared_words(procedure_scope: str, case_scope: str, expected: bool) -> None:
    # given a procedure with a scope
    procedure = plan_save(None, a_command(random_ref("tenant"), scope=procedure_scope), T0, "p", 0).saved
    # when a case scope is matched
    result = matches_scope(procedure, case_scope)
    # then shared content words decide, and an empty side matches everything
    assert result is expected


def test_applicable_procedures_returns_only_active_rules_in_scope() -> None:
    # given one intent with superseded, draft and active rows, and an out-of-scope active rule
    tenant, table = random_ref("tenant"), Table()
    table.save(a_command(tenant), T0)
    active = table.save(a_command(tenant, action="request 6 months of bank statements"), T0)
    table.save(a_command(tenant, status="draft"), T0)
    table.save(a_command(tenant, intent_key="private_banking.pep", scope="private banking"), T0)
    # when the runtime asks for a PSP case
    found = applicable_procedures(table.rows.values(), "PSP merchant")
    # then only the active in-scope rule applies
    assert found == [active]
