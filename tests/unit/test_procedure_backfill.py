"""The one-time backfill of the legacy append-only procedures block (ADR-0102 §8), on the project's fixture."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.memory.procedures.domain.backfill import BackfillPlan, plan_backfill, trigger_theme
from services.memory.procedures.domain.procedures import LearnedProcedure, ProcedureKind, ProcedureStatus
from tests.fixtures import fixture_path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = fixture_path("legacy_learned_procedures.json")


def random_ref(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def load_fixture() -> dict[str, object]:
    loaded: dict[str, object] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return loaded


def fixture_rules() -> list[dict[str, object]]:
    block = load_fixture()["block"]
    assert isinstance(block, dict)
    rules: list[dict[str, object]] = block["rules"]
    return rules


def test_backfill_collapses_the_fixture_into_one_active_rule_per_kind() -> None:
    # given the pilot tenant's five legacy rules
    fixture = load_fixture()
    # when the backfill is planned
    plan = plan_backfill(str(fixture["tenant"]), fixture_rules())
    # then one active substantive, one active governance and three superseded rows, as the fixture expects
    active = [r for r in plan.rows if r.status is ProcedureStatus.ACTIVE]
    counts = {
        "active_substantive": sum(r.kind is ProcedureKind.SUBSTANTIVE for r in active),
        "active_governance": sum(r.kind is ProcedureKind.GOVERNANCE for r in active),
        "superseded": sum(r.status is ProcedureStatus.SUPERSEDED for r in plan.rows),
    }
    assert counts == fixture["expect"]
    assert plan.refused == ()


def test_backfill_chains_each_intent_in_saved_at_order() -> None:
    # given the fixture
    rules = fixture_rules()
    # when the backfill is planned
    plan = plan_backfill("pilot", rules)
    # then the PSP rules (two trigger phrasings) are one chain of three, the exception rules one of two
    by_key: dict[str, list[LearnedProcedure]] = {}
    for row in plan.rows:
        by_key.setdefault(row.intent_key, []).append(row)
    assert sorted(by_key) == ["exception_documentation_requirement.grant_exception", "psp_merchants.newly_incorporated"]
    psp = by_key["psp_merchants.newly_incorporated"]
    assert [r.action for r in psp] == [rules[0]["action"], rules[1]["action"], rules[2]["action"]]
    assert [r.version for r in psp] == [1, 2, 3]
    assert [r.supersedes_id for r in psp] == [None, psp[0].id, psp[1].id]
    assert [r.superseded_by_id for r in psp] == [psp[1].id, psp[2].id, None]
    assert {r.kind for r in psp} == {ProcedureKind.SUBSTANTIVE}
    assert psp[0].created_at == datetime(2026, 5, 2, 9, 14, tzinfo=UTC)
    assert psp[0].updated_at == psp[1].created_at
    exception_rules = by_key["exception_documentation_requirement.grant_exception"]
    assert [(r.version, r.status, r.created_by) for r in exception_rules] == [
        (1, ProcedureStatus.SUPERSEDED, "officer.lee"),
        (2, ProcedureStatus.ACTIVE, "officer.lee"),
    ]


def test_backfill_twice_plans_identical_rows_so_a_second_insert_is_a_no_op() -> None:
    # given a first backfill already inserted
    rules = fixture_rules()
    stored = {row.id: row for row in plan_backfill("pilot", rules).rows}
    # when the backfill runs again and the caller inserts only unknown ids
    again = plan_backfill("pilot", rules)
    inserted = [row for row in again.rows if row.id not in stored]
    # then the plan is identical and nothing is inserted
    assert again == plan_backfill("pilot", rules)
    assert {row.id: row for row in again.rows} == stored
    assert inserted == []


def test_backfill_ids_are_tenant_scoped() -> None:
    # given the same block in two tenants
    rules = fixture_rules()
    # when both are planned
    ids_a = {r.id for r in plan_backfill(random_ref("tenant"), rules).rows}
    ids_b = {r.id for r in plan_backfill(random_ref("tenant"), rules).rows}
    # then no id is shared
    assert ids_a.isdisjoint(ids_b)


def test_backfill_refuses_a_suppressing_rule_and_keeps_the_last_passing_one_active() -> None:
    # given a refinement whose latest version would skip screening
    rules = [*fixture_rules()[:2], {**fixture_rules()[2], "action": "skip sanctions screening for these merchants"}]
    # when the backfill is planned
    plan = plan_backfill("pilot", rules)
    # then that rule is reported and not imported, and the previous version is the active one
    assert [(r.index, r.reason) for r in plan.refused] == [(2, "never_suppress")]
    assert "skip_screening" in plan.refused[0].detail
    assert [(r.version, r.status) for r in plan.rows] == [(1, ProcedureStatus.SUPERSEDED), (2, ProcedureStatus.ACTIVE)]
    assert all("skip" not in r.action for r in plan.rows)


def test_backfill_reports_invalid_and_duplicate_rules() -> None:
    # given a rule without saved_at, one without action, and an exact duplicate
    first = fixture_rules()[0]
    rules = [
        first,
        {**first, "saved_at": "yesterday"},
        {**first, "saved_at": "2026-05-03T00:00:00Z", "action": ""},
        first,
    ]
    # when the backfill is planned
    plan: BackfillPlan = plan_backfill("pilot", rules)
    # then each is reported with its position and only the first is imported
    assert [(r.index, r.reason) for r in plan.refused] == [(1, "invalid"), (2, "invalid"), (3, "duplicate")]
    assert [(r.version, r.status) for r in plan.rows] == [(1, ProcedureStatus.ACTIVE)]


def test_backfill_splits_triggers_that_test_different_things() -> None:
    # given two PSP rules on different triggers, and one whose threshold direction differs
    base = fixture_rules()[0]
    rules = [
        base,
        {**base, "saved_at": "2026-05-03T00:00:00Z", "trigger": "chargeback ratio above 1%"},
        {**base, "saved_at": "2026-05-04T00:00:00Z", "trigger": "incorporated more than 5 years ago"},
    ]
    # when the backfill is planned
    plan = plan_backfill("pilot", rules)
    # then each is its own active intent
    assert sorted(r.intent_key for r in plan.rows) == [
        "psp_merchants.high_chargeback_ratio",
        "psp_merchants.long_incorporated",
        "psp_merchants.newly_incorporated",
    ]
    assert {r.status for r in plan.rows} == {ProcedureStatus.ACTIVE}


@pytest.mark.parametrize(
    "trigger",
    [
        "incorporated less than 3 months ago",
        "incorporation date under 90 days",
        "newly formed",
        "< 3 months since registration",
    ],
)
def test_trigger_themes_fold_phrasings_of_new_incorporation(trigger: str) -> None:
    # given a phrasing of "recently incorporated"
    # when its theme is read
    theme = set(trigger_theme(trigger))
    # then it is the same theme
    assert theme == {"newly", "incorporated"}
