"""The governed learned-procedures store (ADR-0102, issue 7) through gRPC, memory as a real process on
real PostgreSQL: lifecycle and lineage, concurrency, the never-suppress guard, the legacy backfill,
the runtime read, authorization and tenant isolation, the review path, and the audit of each.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError, ProgrammingError
from sqlalchemy.orm import sessionmaker

from services.common.db import url_for_role
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lpb
from services.common.gen.memloop.v1 import memory_service_pb2 as mpb
from services.common.vocabulary import MemoryType
from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.domain.errors import SupersessionConflict
from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.procedures_support import (
    ACTIVE,
    DEPRECATED,
    DRAFT,
    INTENT,
    SUPERSEDED,
    Procedures,
    active_row,
    as_tenant,
    audit_trail,
    failure,
    legacy_request,
)
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision, token

pytestmark = pytest.mark.integration


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("memory"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-procedures")


@pytest.fixture
def tenant() -> str:
    return random_ref("t")


def test_save_then_update_twice_supersedes_with_lineage_versions_1_2_3_and_audits_each(
    node: MemoryNode, tenant: str
) -> None:
    # Given: an officer with the decide role
    officer = Procedures(node, tenant, "reviewer")
    # When: the rule is saved, then refined twice under the same intent
    first = officer.save("request 3 months of bank statements")
    second = officer.save("request 3 months of bank statements or a signed processor history")
    third = officer.save("request bank statements or processor history; escalate if neither within 10 days")
    # Then: each save returns what it superseded, and only the third is active
    v1, v2, v3 = (r.learned_procedure.procedure_id for r in (first, second, third))
    assert not first.HasField("superseded")
    assert (second.superseded.procedure_id, third.superseded.procedure_id) == (v1, v2)
    assert [p.procedure_id for p in officer.listed()] == [v3]
    # Then: GetLearnedProcedure shows the whole chain, oldest first, linked both ways, from any version
    for start in (v1, v2, v3):
        got = officer.GetLearnedProcedure(lpb.GetLearnedProcedureRequest(tenant=tenant, procedure_id=start))
        assert got.learned_procedure.procedure_id == start
        chain = [(p.procedure_id, p.version, p.state, p.supersedes_id, p.superseded_by_id) for p in got.lineage]
        assert chain == [(v1, 1, SUPERSEDED, "", v2), (v2, 2, SUPERSEDED, v1, v3), (v3, 3, ACTIVE, v2, "")]
    assert third.learned_procedure.created_by == "officer.kim"
    assert third.learned_procedure.source == lpb.PROCEDURE_SOURCE_OFFICER_TEACHING
    # Then: three saves and two supersessions are audited, with the officer as actor
    assert [(a, actor, pid, d["version"], d["status"]) for a, actor, pid, d in audit_trail(node, tenant)] == [
        ("learned_procedure.saved", "officer.kim", v1, 1, "active"),
        ("learned_procedure.superseded", "officer.kim", v1, 1, "superseded"),
        ("learned_procedure.saved", "officer.kim", v2, 2, "active"),
        ("learned_procedure.superseded", "officer.kim", v2, 2, "superseded"),
        ("learned_procedure.saved", "officer.kim", v3, 3, "active"),
    ]


def test_a_repeated_request_id_returns_the_first_save_and_writes_nothing(node: MemoryNode, tenant: str) -> None:
    # Given: a save with a request id
    officer, request_id = Procedures(node, tenant, "reviewer"), random_ref("req")
    first = officer.save("request 3 months of bank statements", request_id=request_id)
    # When: the same call is repeated, and the id is reused for another change
    again = officer.save("request 3 months of bank statements", request_id=request_id)
    reused = failure(lambda: officer.save("request 6 months of bank statements", request_id=request_id))
    # Then: the repeat answers the first save; the reuse is refused; one row and one audit event exist
    assert again.learned_procedure == first.learned_procedure
    assert reused[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "REQUEST_ID_REUSED")
    assert len(officer.listed()) == 1 and len(audit_trail(node, tenant)) == 1


def test_a_draft_operates_only_after_confirm_and_deprecation_retires_a_rule(node: MemoryNode, tenant: str) -> None:
    # Given: an active rule and a draft refinement of it
    officer = Procedures(node, tenant, "reviewer")
    v1 = officer.save("request 3 months of bank statements").learned_procedure
    draft = officer.save("request 6 months of bank statements", draft=True)
    # Then: the draft is stored as a draft and supersedes nothing yet
    assert draft.learned_procedure.state == DRAFT and not draft.HasField("superseded")
    assert [p.procedure_id for p in officer.listed()] == [v1.procedure_id]
    # When: the officer confirms the draft
    confirmed = officer.ConfirmLearnedProcedure(
        lpb.ConfirmLearnedProcedureRequest(tenant=tenant, procedure_id=draft.learned_procedure.procedure_id)
    )
    # Then: it is the active version 2, and version 1 is superseded with its forward link
    assert (confirmed.learned_procedure.state, confirmed.learned_procedure.version) == (ACTIVE, 2)
    assert confirmed.superseded.superseded_by_id == draft.learned_procedure.procedure_id
    # When: the rule is deprecated by its intent key
    deprecated = officer.DeprecateLearnedProcedure(
        lpb.DeprecateLearnedProcedureRequest(tenant=tenant, intent_key=INTENT, reason="policy withdrawn")
    ).learned_procedure
    # Then: nothing of the intent operates any more, and a second deprecation is refused
    assert deprecated.state == DEPRECATED and officer.listed() == []
    assert [p.procedure_id for p in officer.listed(DEPRECATED)] == [deprecated.procedure_id]
    again = lpb.DeprecateLearnedProcedureRequest(tenant=tenant, procedure_id=deprecated.procedure_id, reason="again")
    assert failure(lambda: officer.DeprecateLearnedProcedure(again))[:2] == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ILLEGAL_TRANSITION",
    )
    missing = lpb.DeprecateLearnedProcedureRequest(tenant=tenant, intent_key=INTENT, reason="nothing active")
    assert failure(lambda: officer.DeprecateLearnedProcedure(missing))[0] == grpc.StatusCode.NOT_FOUND
    # Then: every transition is audited, the deprecation with its reason
    audit = audit_trail(node, tenant)
    assert [a[0] for a in audit] == [
        "learned_procedure.saved",
        "learned_procedure.saved",
        "learned_procedure.superseded",
        "learned_procedure.confirmed",
        "learned_procedure.deprecated",
    ]
    assert audit[-1][3]["reason"] == "policy withdrawn" and audit[-1][2] == deprecated.procedure_id


@pytest.mark.timeout(240)
def test_ten_concurrent_saves_for_one_intent_leave_exactly_one_active_in_every_round(
    node: MemoryNode, tenant: str
) -> None:
    # Given: ten officers' channels
    officers = [Procedures(node, tenant, "reviewer", subject=f"officer.{i}") for i in range(10)]
    saved: list[str] = []
    for round_ in range(3):
        # When: all ten save a version of the same intent at once
        barrier = threading.Barrier(len(officers))

        def save(i: int, round_: int = round_, barrier: threading.Barrier = barrier) -> str:
            barrier.wait()
            response = officers[i].save(f"request {round_ * 10 + i + 1} months of bank statements")
            return str(response.learned_procedure.procedure_id)

        with ThreadPoolExecutor(max_workers=len(officers)) as pool:
            saved += list(pool.map(save, range(len(officers))))
        # Then: every save succeeded and exactly one row of the intent is active
        assert len(officers[0].listed()) == 1
    # Then: the 30 versions form one unbroken chain 1..30 ending in the active row
    lineage = officers[0].GetLearnedProcedure(lpb.GetLearnedProcedureRequest(tenant=tenant, procedure_id=saved[0]))
    chain = list(lineage.lineage)
    assert sorted(saved) == sorted(p.procedure_id for p in chain)
    assert [p.version for p in chain] == list(range(1, 31))
    assert [p.state for p in chain] == [SUPERSEDED] * 29 + [ACTIVE]
    pairs = list(itertools.pairwise(chain))
    assert [(a.superseded_by_id, b.supersedes_id) for a, b in pairs] == [
        (b.procedure_id, a.procedure_id) for a, b in pairs
    ]
    actions = [a[0] for a in audit_trail(node, tenant)]
    assert (actions.count("learned_procedure.saved"), actions.count("learned_procedure.superseded")) == (30, 29)


SUPPRESSING = [
    ("skip sanctions screening for PSP merchants", "action"),
    ("do not escalate PEP matches", "action"),
    ("waive adverse media checks for low-risk clients", "action"),
    ("there is no need to report these to compliance", "action"),
    ("ignore PEP hits for repeat customers", "action"),
    ("treat adverse media hits as cleared without review", "action"),
    ("s\u043aip sanctions screening", "action"),  # a Cyrillic look-alike letter
]


@pytest.mark.parametrize("draft", [False, True])
def test_the_guard_refuses_every_suppression_and_admits_added_scrutiny(
    node: MemoryNode, tenant: str, draft: bool
) -> None:
    officer = Procedures(node, tenant, "reviewer")
    for action, field in SUPPRESSING:
        # When: an action that would reduce scrutiny is saved (active or as a draft)
        code, reason, fields, message = failure(lambda action=action: officer.save(action, draft=draft))  # type: ignore[misc]
        # Then: INVALID_ARGUMENT, NEVER_SUPPRESS, naming the field and the rule that matched
        assert (code, reason, fields) == (grpc.StatusCode.INVALID_ARGUMENT, "NEVER_SUPPRESS", [field]), action
        assert "never-suppress rule '" in message, message
    rationale = failure(lambda: officer.save("request bank statements", rationale="so we can skip PEP screening"))
    assert rationale[1:3] == ("NEVER_SUPPRESS", ["rationale"])
    # Then: nothing was written or audited
    assert officer.listed() == [] and officer.listed(DRAFT) == [] and audit_trail(node, tenant) == []
    # When: actions that add scrutiny, some mentioning screening, are saved
    for i, action in enumerate(
        ["escalate if screening finds a match", "never skip the sanctions check", "escalate PEP matches to the MLRO"]
    ):
        saved = officer.save(action, intent=f"scrutiny.rule_{i}", draft=draft)
        # Then: they are stored
        assert saved.learned_procedure.action == action
    assert len(officer.listed(DRAFT if draft else ACTIVE)) == 3


def test_backfill_of_the_legacy_fixture_gives_two_active_three_superseded_and_twice_the_same(
    node: MemoryNode, tenant: str
) -> None:
    # Given: the pilot's legacy block of five refinements of two policies, and a super-admin
    admin, officer = Procedures(node, tenant, "admin", subject="root"), Procedures(node, tenant, "reviewer")
    # When: an officer tries, then the admin backfills twice
    assert failure(lambda: officer.BackfillLearnedProcedures(legacy_request(tenant)))[0] == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    first = admin.BackfillLearnedProcedures(legacy_request(tenant))
    second = admin.BackfillLearnedProcedures(legacy_request(tenant))
    # Then: one active substantive rule, one active governance rule, three superseded
    assert (first.inserted, first.already_present, list(first.refused)) == (5, 0, [])
    kinds = sorted(p.kind for p in admin.listed())
    assert kinds == [lpb.PROCEDURE_KIND_SUBSTANTIVE, lpb.PROCEDURE_KIND_GOVERNANCE]
    assert len(admin.listed(SUPERSEDED)) == 3
    by_kind = {p.kind: p for p in first.active}
    assert "escalate if neither within 10 days" in by_kind[lpb.PROCEDURE_KIND_SUBSTANTIVE].action
    assert "team lead or above" in by_kind[lpb.PROCEDURE_KIND_GOVERNANCE].action
    # Then: each active rule carries its lineage, versions from 1
    for active in first.active:
        got = admin.GetLearnedProcedure(lpb.GetLearnedProcedureRequest(tenant=tenant, procedure_id=active.procedure_id))
        assert [p.version for p in got.lineage] == list(range(1, active.version + 1))
        assert got.lineage[-1].supersedes_id == got.lineage[-2].procedure_id
    assert sorted(p.version for p in first.active) == [2, 3]
    # Then: the second run changed nothing and answered the same
    assert (second.inserted, second.already_present) == (0, 5)
    assert sorted(p.procedure_id for p in second.active) == sorted(p.procedure_id for p in first.active)
    audit = audit_trail(node, tenant)
    assert [a[0] for a in audit] == ["learned_procedure.backfilled"] * 5
    assert {a[1] for a in audit} == {"root"} and sorted(a[3]["legacy_index"] for a in audit) == [0, 1, 2, 3, 4]


def test_applicable_procedures_return_only_active_rules_that_match_the_case_scope(
    node: MemoryNode, tenant: str
) -> None:
    # Given: an active PSP rule (with a superseded version), a deprecated one, a draft, a crypto rule
    officer, reader = Procedures(node, tenant, "reviewer"), Procedures(node, tenant, "reader", subject="analyst")
    officer.save("request 3 months of bank statements")
    psp = officer.save("request 3 months of bank statements or processor history").learned_procedure
    officer.save("request a draft checklist", intent="psp_merchants.draft", draft=True)
    officer.save("request proof of address", intent="psp_merchants.address")
    officer.DeprecateLearnedProcedure(
        lpb.DeprecateLearnedProcedureRequest(tenant=tenant, intent_key="psp_merchants.address", reason="retired")
    )
    crypto = officer.save("request source of funds", intent="crypto.sof", scope="crypto exchanges").learned_procedure

    # When: the runtime read asks for a PSP merchant case, and for every case, one per page
    def applicable(scope: str, page_size: int = 0, page_token: str = "") -> lpb.ListApplicableProceduresResponse:
        request = lpb.ListApplicableProceduresRequest(
            tenant=tenant, scope=scope, page_size=page_size, page_token=page_token
        )
        return reader.ListApplicableProcedures(request)  # type: ignore[no-any-return]

    psp_case = applicable("PSP merchant onboarding").learned_procedures
    first = applicable("", page_size=1)
    rest = applicable("", page_size=1, page_token=first.next_page_token)
    # Then: only active rules apply, and only those whose scope matches
    assert [p.procedure_id for p in psp_case] == [psp.procedure_id]
    assert [p.procedure_id for p in [*first.learned_procedures, *rest.learned_procedures]] == [
        psp.procedure_id,
        crypto.procedure_id,
    ]
    assert rest.next_page_token == ""


def test_roles_and_tenants_bound_every_call(node: MemoryNode, tenant: str) -> None:
    # Given: a rule of this tenant, a read-only token, and officers of another tenant
    officer, reader = Procedures(node, tenant, "reviewer"), Procedures(node, tenant, "reader", subject="analyst")
    saved = officer.save("request 3 months of bank statements").learned_procedure
    other = random_ref("t")
    foreign, foreign_admin = Procedures(node, other, "reviewer"), Procedures(node, other, "admin")
    denied = grpc.StatusCode.PERMISSION_DENIED
    # Then: the read-only token reads but cannot save, confirm, deprecate or backfill
    assert [p.procedure_id for p in reader.listed()] == [saved.procedure_id]
    assert failure(lambda: reader.save("request 6 months of bank statements"))[:2] == (denied, "ROLE_REQUIRED")
    confirm = lpb.ConfirmLearnedProcedureRequest(tenant=tenant, procedure_id=saved.procedure_id)
    deprecate = lpb.DeprecateLearnedProcedureRequest(tenant=tenant, procedure_id=saved.procedure_id, reason="x")
    assert failure(lambda: reader.ConfirmLearnedProcedure(confirm))[0] == denied
    assert failure(lambda: reader.DeprecateLearnedProcedure(deprecate))[0] == denied
    assert failure(lambda: reader.BackfillLearnedProcedures(legacy_request(tenant)))[0] == denied
    # Then: a token of another tenant is denied before anything is looked up, even for a missing id
    get = lpb.GetLearnedProcedureRequest(tenant=tenant, procedure_id=saved.procedure_id)
    assert failure(lambda: foreign.GetLearnedProcedure(get))[0] == denied
    assert failure(lambda: foreign.ListLearnedProcedures(lpb.ListLearnedProceduresRequest(tenant=tenant)))[0] == denied
    assert failure(lambda: foreign.save("request bank statements", tenant=tenant))[0] == denied
    # Then: in its own tenant the other tenant sees nothing of this one, not even by id
    assert foreign_admin.listed() == [] and foreign_admin.listed(SUPERSEDED) == []
    own = lpb.GetLearnedProcedureRequest(tenant=other, procedure_id=saved.procedure_id)
    assert failure(lambda: foreign_admin.GetLearnedProcedure(own))[:2] == (
        grpc.StatusCode.NOT_FOUND,
        "LEARNED_PROCEDURE_NOT_FOUND",
    )
    applicable = foreign_admin.ListApplicableProcedures(lpb.ListApplicableProceduresRequest(tenant=other))
    assert list(applicable.learned_procedures) == [] and audit_trail(node, other) == []
    # Then: nothing the denied calls tried was written
    assert [a[0] for a in audit_trail(node, tenant)] == ["learned_procedure.saved"]


def test_a_procedural_candidate_approved_in_review_is_saved_canonical_from_sleeptime(
    node: MemoryNode, tenant: str
) -> None:
    # Given: two procedural candidates of one intent held for review, and one that would suppress
    service = node.stub(token(tenant, ("service",)))
    reviewer = node.stub(token(tenant, ("reviewer",), subject="rita"), tenant=tenant)
    officer = Procedures(node, tenant, "reader")

    def held(text: str, intent: str) -> tuple[str, str]:
        event_id = random_ref("evt")
        proposal = decision(
            text,
            intent=intent,
            kind=MemoryType.PROCEDURAL,
            outcome=cpb.DECISION_OUTCOME_REVIEW,
            tenant=tenant,
        )
        applied = service.ApplyLearning(apply_request(event_id, proposal, tenant=tenant)).applied
        return event_id, applied[0].review_item_id

    def approve(review_item_id: str) -> mpb.ResolveReviewItemResponse:
        request = mpb.ResolveReviewItemRequest(
            tenant=tenant, review_item_id=review_item_id, resolution=mpb.REVIEW_RESOLUTION_APPROVE, reason="ok"
        )
        return reviewer.ResolveReviewItem(request)  # type: ignore[no-any-return]

    first_event, first = held("Escalate new PSP merchants to the MLRO", "psp:escalation")
    _, second = held("Escalate new PSP merchants and crypto exchanges to the MLRO", "psp:escalation")
    _, bad = held("Skip sanctions screening for repeat PSP merchants", "psp:screening")
    # When: the reviewer approves all three
    approve(first)
    approve(second)
    refused = failure(lambda: approve(bad))
    # Then: both approvals went through save-canonical: one active version 2 of intent psp.escalation
    active = officer.listed()
    assert [(p.intent_key, p.version, p.source, p.created_by) for p in active] == [
        ("psp.escalation", 2, lpb.PROCEDURE_SOURCE_SLEEPTIME_CONSOLIDATION, "rita")
    ]
    assert active[0].action == "Escalate new PSP merchants and crypto exchanges to the MLRO"
    assert active[0].details["review_item_id"] == second
    # Then: the suppressing one was refused whole (its review stays pending, no procedure written)
    assert refused[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "NEVER_SUPPRESS")
    pending = reviewer.ListReviewItems(mpb.ListReviewItemsRequest(tenant=tenant, state=mpb.REVIEW_STATE_PENDING))
    assert [r.review_item_id for r in pending.review_items] == [bad]
    # Then: the procedure's audit names the reviewer and the learning event it came from
    saved = [a for a in audit_trail(node, tenant, "learned_procedure.saved")]
    assert [(a[1], a[3]["version"], a[3]["review_item_id"]) for a in saved] == [("rita", 1, first), ("rita", 2, second)]
    stub = node.stub(token(tenant, ("admin",)), tenant=tenant)
    events = stub.ListAuditEvents(mpb.ListAuditEventsRequest(tenant=tenant, event_id=first_event)).audit_events
    assert "learned_procedure.saved" in {e.action for e in events}


def test_the_schema_itself_refuses_a_second_active_rule_edits_in_place_and_other_tenants(
    node: MemoryNode, tenant: str
) -> None:
    # Given: the migrated database, reached directly as the service's app role (RLS applies)
    engine = create_engine(url_for_role(node.env["MEMLOOP_MEMORY_DATABASE_URL"], "memloop_memory_app"))
    insert = text(
        "INSERT INTO learned_procedures (id, tenant, intent_key, title, kind, action, status)"
        " VALUES (:id, :tenant, 'dup.intent', 't', 'substantive', 'request statements', 'active')"
    )
    try:
        with engine.begin() as connection:
            as_tenant(connection, tenant)
            connection.execute(insert, {"id": str(uuid.uuid4()), "tenant": tenant})
        # When / Then: a second active row for the intent breaks the partial unique index
        with pytest.raises(IntegrityError, match="ux_learned_proc_active_intent"), engine.begin() as connection:
            as_tenant(connection, tenant)
            connection.execute(insert, {"id": str(uuid.uuid4()), "tenant": tenant})
        # When / Then: through the repository, the same race is a SupersessionConflict (retried)
        with SqlMemoryUnitOfWork(sessionmaker(engine), tenant) as uow, pytest.raises(SupersessionConflict):
            uow.procedures.add(active_row(tenant, "dup.intent"))
        # When / Then: rule text cannot be edited in place, and rows cannot be deleted
        for statement in ("UPDATE learned_procedures SET action = 'x'", "DELETE FROM learned_procedures"):
            with pytest.raises(ProgrammingError, match="permission denied"), engine.begin() as connection:
                as_tenant(connection, tenant)
                connection.execute(text(statement))
        # When / Then: another tenant's session sees no row and cannot write into this tenant
        with engine.begin() as connection:
            as_tenant(connection, random_ref("t"))
            assert connection.execute(text("SELECT count(*) FROM learned_procedures")).scalar_one() == 0
            with pytest.raises(ProgrammingError, match="row-level security"):
                connection.execute(insert, {"id": str(uuid.uuid4()), "tenant": tenant})
    finally:
        engine.dispose()
