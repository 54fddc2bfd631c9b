"""The console's handlers against in-memory services: sign-in, CSRF, roles, rendering, the JSON API."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from services.common.auth import issue_token
from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.console.adapters.metrics import parse_figures
from services.console.web.app import create_app
from services.console.web.forget import forget_request
from services.console.web.procedures import legacy_rules
from services.console.web.session import SESSION_COOKIE, CsrfSigner
from tests.unit.console_fakes import CSRF_SECRET, ISSUER, FakeDeadLetters, FakeWorld, fake_console


def token(tenant: str = "acme", roles: tuple[str, ...] = ("reviewer",), subject: str = "rita") -> str:
    return issue_token(ISSUER, subject=subject, tenant=tenant, roles=roles)


def pending(
    item_id: str, user: str, text: str, type_: candidate_pb2.MemoryType.ValueType = candidate_pb2.MEMORY_TYPE_PROCEDURAL
) -> mem.ReviewItem:
    candidate = candidate_pb2.Candidate(type=type_, origin=candidate_pb2.ORIGIN_OWNER, text=text, intent_key="")
    decision = candidate_pb2.Decision(
        candidate=candidate,
        outcome=candidate_pb2.DECISION_OUTCOME_REVIEW,
        reasons=[candidate_pb2.DecisionReason(code="PROCEDURAL_NEEDS_REVIEW", message="a human approves")],
        policy_version="policy-7",
    )
    return mem.ReviewItem(
        review_item_id=item_id, tenant="acme", user=user, decision=decision, state=mem.REVIEW_STATE_PENDING
    )


@pytest.fixture
def world() -> FakeWorld:
    return FakeWorld(
        review_items=[
            pending("r1", "alice", "Always add a buffer after meetings."),
            pending("r2", "alice", "Maybe meetings after 11:00.", candidate_pb2.MEMORY_TYPE_PREFERENCE),
            pending("r3", "bob", "Forward invoices to finance."),
        ]
    )


def client_for(world: FakeWorld, bearer: str | None = None, dead_letters: FakeDeadLetters | None = None) -> TestClient:
    client = TestClient(create_app(fake_console(world, dead_letters)), follow_redirects=False)
    if bearer:
        client.cookies.set(SESSION_COOKIE, bearer)
    return client


def csrf(bearer: str) -> str:
    return CsrfSigner(CSRF_SECRET).token_for(bearer)


def test_without_a_session_pages_redirect_to_sign_in_and_the_api_answers_401(world: FakeWorld) -> None:
    client = client_for(world)
    assert client.get("/review").headers["location"] == "/login?next=/review"
    response = client.get("/api/memory/learned-procedures")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_sign_in_sets_an_httponly_samesite_strict_cookie_and_refuses_a_bad_token(world: FakeWorld) -> None:
    client = client_for(world)
    page = client.get("/login?next=/memory")
    nonce = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    refused = client.post("/login", data={"csrf_token": nonce, "token": "not-a-token", "next": "/memory"})
    assert refused.status_code == 401
    signed_in = client.post("/login", data={"csrf_token": nonce, "token": token(), "next": "/memory"})
    assert signed_in.status_code == 303
    assert signed_in.headers["location"] == "/memory"
    cookie = signed_in.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie


def test_sign_in_without_the_login_form_token_is_refused_and_next_cannot_leave_the_site(world: FakeWorld) -> None:
    client = client_for(world)
    assert client.post("/login", data={"token": token()}).status_code == 403
    page = client.get("/login?next=https://evil.example/")
    assert 'name="next" value="/review"' in page.text


def test_a_post_without_the_csrf_token_is_refused_before_any_service_call(world: FakeWorld) -> None:
    bearer = token()
    client = client_for(world, bearer)
    response = client.post("/review/r1", data={"resolution": "approve", "reason": "ok"})
    assert response.status_code == 403
    assert "CSRF" in response.text
    assert ("ResolveReviewItem", "rita") not in world.calls
    assert world.review_items[0].state == mem.REVIEW_STATE_PENDING


def test_a_reviewer_approves_with_a_reason_and_the_service_records_the_person(world: FakeWorld) -> None:
    bearer = token()
    client = client_for(world, bearer)
    response = client.post(
        "/review/r1",
        data={"resolution": "approve", "reason": "Alice confirmed", "csrf_token": csrf(bearer)},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert "Approved" in response.text
    assert world.review_items[0].state == mem.REVIEW_STATE_APPROVED
    assert world.review_items[0].reviewer == "rita"


def test_a_reason_is_required_to_resolve(world: FakeWorld) -> None:
    bearer = token()
    response = client_for(world, bearer).post(
        "/review/r1", data={"resolution": "deny", "reason": " ", "csrf_token": csrf(bearer)}
    )
    assert response.status_code == 400
    assert "reason" in response.text
    assert world.review_items[0].state == mem.REVIEW_STATE_PENDING


def test_the_queue_counts_per_user_and_filters_by_user_and_type(world: FakeWorld) -> None:
    client = client_for(world, token())
    page = client.get("/review?user=alice&type=preference").text
    assert re.search(r'data-testid="count-alice">2<', page)
    assert re.search(r'data-testid="count-bob">1<', page)
    assert "Maybe meetings after 11:00." in page
    assert "Always add a buffer" not in page
    assert "Forward invoices" not in page


def test_a_reader_sees_no_action_and_a_forged_post_is_refused_by_the_service(world: FakeWorld) -> None:
    bearer = token(roles=("reader",), subject="ray")
    client = client_for(world, bearer)
    page = client.get("/review").text
    assert "Always add a buffer" in page
    assert "data-approve" not in page and "data-deny" not in page
    forged = client.post("/review/r1", data={"resolution": "approve", "reason": "x", "csrf_token": csrf(bearer)})
    assert forged.status_code == 403
    assert world.review_items[0].state == mem.REVIEW_STATE_PENDING


def test_another_tenants_reviewer_sees_nothing(world: FakeWorld) -> None:
    page = client_for(world, token(tenant="globex")).get("/review").text
    assert 'data-testid="empty-queue"' in page
    assert "alice" not in page


def test_procedures_empty_state_is_the_honest_sentence(world: FakeWorld) -> None:
    page = client_for(world, token(roles=("reader",))).get("/memory/learned-procedures").text
    assert "No learned procedures yet — teach the assistant a rule to get started" in page


def test_the_api_lists_and_saves_with_a_bearer_header_without_csrf(world: FakeWorld) -> None:
    client = client_for(world)
    headers = {"Authorization": f"Bearer {token(roles=('reviewer',), subject='officer.kim')}"}
    body = {"intent_key": "psp_bank", "title": "PSP bank statements", "kind": "substantive", "scope": "PSP merchants",
            "trigger": "incorporated < 3 months", "action": "request 3 months of bank statements"}  # fmt: skip
    created = client.post("/api/memory/learned-procedures", json=body, headers=headers)
    assert created.status_code == 201
    assert created.json()["learned_procedure"]["created_by"] == "officer.kim"
    listed = client.get("/api/memory/learned-procedures?status=active&kind=substantive", headers=headers).json()
    assert [p["intent_key"] for p in listed["learned_procedures"]] == ["psp_bank"]
    assert client.get("/api/memory/learned-procedures?status=bogus", headers=headers).status_code == 400


def test_a_never_suppress_refusal_is_shown_as_that_refusal_with_its_reason(world: FakeWorld) -> None:
    bearer = token(roles=("reviewer",))
    client = client_for(world, bearer)
    form = {"intent_key": "x", "title": "x", "scope": "all", "trigger": "pep hit", "action": "skip screening",
            "csrf_token": csrf(bearer)}  # fmt: skip
    toast = client.post("/memory/learned-procedures", data=form, headers={"HX-Request": "true"})
    assert toast.status_code == 400
    assert "Refused by the never-suppress guard" in toast.text
    assert toast.headers["HX-Retarget"] == "#toasts"
    cookie_only = client.post("/api/memory/learned-procedures", json=form)
    assert cookie_only.json()["error"]["code"] == "CSRF_REJECTED"  # a cookie alone never authorises a write
    api = client_for(world).post(
        "/api/memory/learned-procedures",
        json={k: v for k, v in form.items() if k != "csrf_token"},
        headers={"Authorization": f"Bearer {bearer}"},
    )
    assert api.json()["error"]["reason"] == "NEVER_SUPPRESS"
    assert world.procedures == []


def test_backfill_preview_asks_the_service_to_validate_only(world: FakeWorld) -> None:
    bearer = token(roles=("admin",))
    client = client_for(world, bearer)
    rules = '[{"saved_at": "2026-05-02T09:14:00Z", "scope": "PSP merchants", "trigger": "t", "action": "a"}]'
    preview = client.post("/memory/learned-procedures/backfill", data={"rules": rules, "mode": "preview",
                                                                       "csrf_token": csrf(bearer)})  # fmt: skip
    assert "Preview — nothing was written" in preview.text
    client.post(
        "/memory/learned-procedures/backfill", data={"rules": rules, "mode": "apply", "csrf_token": csrf(bearer)}
    )
    assert world.backfill_requests == [True, False]
    bad = client.post("/memory/learned-procedures/backfill", data={"rules": "{", "csrf_token": csrf(bearer)})
    assert bad.status_code == 400


def test_legacy_rules_accept_the_block_shapes_and_name_a_bad_field() -> None:
    rule = {"scope": "s", "trigger": "t", "action": "a"}
    assert (
        len(legacy_rules([rule]))
        == len(legacy_rules({"rules": [rule]}))
        == len(legacy_rules({"block": {"rules": [rule]}}))
        == 1
    )
    with pytest.raises(ValueError, match=r"rules\[1\]"):
        legacy_rules([rule, "nope"])


def test_forget_requests_map_the_scope_and_tell_event_ids_from_request_ids() -> None:
    by_event = forget_request("acme", {"scope": "event", "event_id": "0b9c7c2e-1c7a-4a53-9a53-1f2f0d7f2d11"})
    by_request = forget_request("acme", {"scope": "event", "event_id": "req-alice-0001"})
    assert (by_event.WhichOneof("target"), by_event.event_id, by_event.source_request_id)[1:] == (
        "0b9c7c2e-1c7a-4a53-9a53-1f2f0d7f2d11", "")  # fmt: skip
    assert by_request.source_request_id == "req-alice-0001"
    assert forget_request("acme", {"scope": "user", "user": "alice"}).WhichOneof("target") == "user"
    with pytest.raises(ValueError, match="memory_id"):
        forget_request("acme", {"scope": "memory"})


def test_a_pending_receipt_polls_and_forget_needs_admin_at_the_service(world: FakeWorld) -> None:
    bearer = token(roles=("reviewer",))
    client = client_for(world, bearer)
    receipt = client.get("/forget/del-1").text
    assert 'hx-trigger="every 1s"' in receipt and 'http-equiv="refresh"' in receipt
    refused = client.post("/forget", data={"scope": "user", "user": "alice", "csrf_token": csrf(bearer)})
    assert refused.status_code == 403


def test_replay_needs_admin_and_only_admins_see_the_button(world: FakeWorld) -> None:
    letters = FakeDeadLetters()
    reviewer = token(roles=("reviewer",))
    assert ">Replay<" not in client_for(world, reviewer, letters).get("/dead-letters").text
    denied = client_for(world, reviewer, letters).post("/dead-letters/7/replay", data={"csrf_token": csrf(reviewer)})
    assert denied.status_code == 403
    admin = token(roles=("admin",))
    replayed = client_for(world, admin, letters).post("/dead-letters/7/replay", data={"csrf_token": csrf(admin)})
    assert replayed.status_code == 303
    assert letters.replayed == [("acme", 7)]


@pytest.mark.parametrize(
    "path", ["/login", "/review", "/memory", "/memory/alice", "/memory/learned-procedures", "/forget", "/dead-letters",
             "/health", "/memory/learned-procedures/backfill", "/forget/del-1"]
)  # fmt: skip
def test_every_page_has_a_strict_csp_and_no_inline_script_or_style(world: FakeWorld, path: str) -> None:
    response = client_for(world, token(roles=("admin", "reviewer"))).get(path)
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    assert "unsafe-inline" not in csp and "script-src 'self'" in csp
    assert not re.search(r"<script(?![^>]*\bsrc=)", response.text)
    assert not re.search(r"\sstyle=|\son[a-z]+=", response.text)
    for field_id in re.findall(
        r"<(?:input|select|textarea)(?![^>]*type=\"(?:hidden|radio)\")[^>]*\bid=\"([^\"]+)\"", response.text
    ):
        assert f'for="{field_id}"' in response.text, f"{path}: field {field_id} has no label"


def test_health_figures_are_parsed_from_prometheus_text() -> None:
    text = "# TYPE memloop_worker_dlq_depth gauge\nmemloop_worker_dlq_depth 3.0\n# TYPE other gauge\nother 1\n"
    figures = parse_figures("worker", text)
    assert [(f.name, f.value) for f in figures] == [("memloop_worker_dlq_depth", 3.0)]


def test_every_state_changing_request_is_logged_with_the_person(
    world: FakeWorld, caplog: pytest.LogCaptureFixture
) -> None:
    bearer = token(subject="rita")
    with caplog.at_level("INFO", logger="memloop.console.actions"):
        client_for(world, bearer).post(
            "/review/r2", data={"resolution": "deny", "reason": "no", "csrf_token": csrf(bearer)}
        )
    assert any(
        "POST /review/r2 by rita tenant=acme" in r.getMessage() and r.getMessage().endswith("303")
        for r in caplog.records
    )


def test_an_expired_session_sends_htmx_to_sign_in_instead_of_swapping_the_login_page(world: FakeWorld) -> None:
    expired = issue_token(ISSUER, subject="rita", tenant="acme", roles=["reviewer"], ttl_seconds=-10)
    response = client_for(world, expired).get("/memory/learned-procedures", headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/login?next=/memory/learned-procedures"


def test_the_api_returns_detail_with_lineage_deprecates_with_a_reason_and_maps_not_found(world: FakeWorld) -> None:
    headers = {"Authorization": f"Bearer {token(roles=('reviewer',), subject='officer.kim')}"}
    client = client_for(world)
    body = {"intent_key": "k", "title": "t", "scope": "s", "trigger": "tr", "action": "request documents"}
    created = client.post("/api/memory/learned-procedures", json=body, headers=headers).json()["learned_procedure"]
    detail = client.get(f"/api/memory/learned-procedures/{created['procedure_id']}", headers=headers).json()
    assert [v["procedure_id"] for v in detail["lineage"]] == [created["procedure_id"]]
    path = f"/api/memory/learned-procedures/{created['procedure_id']}/deprecate"
    assert client.post(path, json={}, headers=headers).json()["error"]["reason"] == "reason"
    deprecated = client.post(path, json={"reason": "superseded by policy"}, headers=headers).json()
    assert deprecated["learned_procedure"]["state"] == "PROCEDURE_STATE_DEPRECATED"
    missing = client.get("/api/memory/learned-procedures/nope", headers=headers)
    assert missing.status_code == 404


def test_the_side_sheet_offers_edit_and_deprecate_only_to_a_role_that_may(world: FakeWorld) -> None:
    world.procedures.append(
        lp.LearnedProcedure(procedure_id="p9", intent_key="k", title="Rule", state=lp.PROCEDURE_STATE_ACTIVE)
    )
    officer = client_for(world, token(roles=("reviewer",))).get(
        "/memory/learned-procedures/p9", headers={"HX-Request": "true"}
    )
    reader = client_for(world, token(roles=("reader",))).get(
        "/memory/learned-procedures/p9", headers={"HX-Request": "true"}
    )
    assert 'id="sheet-title"' in officer.text and "Deprecate" in officer.text and "Save as new version" in officer.text
    assert (
        'id="sheet-title"' in reader.text
        and "Deprecate" not in reader.text
        and "Save as new version" not in reader.text
    )
