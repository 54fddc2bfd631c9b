"""The console in a real browser against the whole stack as processes: review, memory lineage,
learned procedures, forget receipts, CSRF, tenant isolation and roles."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from services.cli.alice_review import queue_alice_reviews
from services.cli.stack import Stack
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from tests.e2e.console_support import new_page, sign_in
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant

pytestmark = pytest.mark.e2e


@pytest.fixture
def seeded(stack: Stack) -> Iterator[Clients]:
    """A fresh tenant where Alice's meeting window is active and two of her mails wait for review."""
    clients = Clients(stack, fresh_tenant())
    response = clients.serving.HandleRequest(alice_request("preference-after-nine", clients.tenant), timeout=30)
    eventually(lambda: clients.processed(response.event_id), what="the meeting window was learned")
    queue_alice_reviews(
        stack.services["serving"].target, stack.services["memory"].target,
        stack.token(clients.tenant), tenant=clients.tenant,
    )  # fmt: skip
    try:
        yield clients
    finally:
        clients.close()


def pending(clients: Clients) -> list[mem.ReviewItem]:
    request = mem.ListReviewItemsRequest(tenant=clients.tenant, state=mem.REVIEW_STATE_PENDING)
    return list(clients.memory.ListReviewItems(request, timeout=10).review_items)


def person(browser: Browser, stack: Stack, tenant: str, roles: tuple[str, ...], subject: str, path: str) -> Page:
    page = new_page(browser)
    sign_in(page, stack.console_url, stack.token(tenant, roles, subject=subject), path)
    return page


def test_approving_a_review_item_makes_the_memory_active_with_its_lineage(
    browser: Browser, stack: Stack, seeded: Clients
) -> None:
    # Given a reviewer on the queue, where the hedged window sits beside the active 09:00 memory
    page = person(browser, stack, seeded.tenant, ("reviewer", "reader"), "rita.reviewer", "/review?user=alice")
    item = page.locator("[data-review-item]", has_text="after 11:00")
    expect(item.get_by_test_id("conflict-text")).to_contain_text("09:00")
    expect(page.get_by_test_id("count-alice")).to_have_text("2")
    # When she approves it with a reason
    item.get_by_label("Reason").fill("Alice confirmed on the phone")
    item.get_by_role("button", name="Approve").click()
    # Then the card says so, and the memory page shows it active, superseding the 09:00 version
    page.get_by_test_id("approved-memory").click()
    expect(page.get_by_test_id("memory-state")).to_have_text("active")
    expect(page.get_by_test_id("memory-text")).to_contain_text("11:00")
    lineage = page.get_by_test_id("lineage")
    expect(lineage.locator("li")).to_have_count(2)
    expect(lineage.locator("li").first).to_contain_text("superseded")
    expect(lineage.locator("li").first).to_contain_text("Why superseded")
    expect(page.get_by_test_id("trace")).to_contain_text("serving.commit")
    # And memory recorded the person, not the console, as the reviewer
    approved = [m for m in seeded.memories() if "11:00" in m.text]
    assert [m.state for m in approved] == [mem.MEMORY_STATE_ACTIVE]
    audit = seeded.audit(approved[0].source_event_ids[0])
    assert any(a.action == "review.approved" and a.actor == "rita.reviewer" for a in audit)


def test_denying_a_review_item_from_the_keyboard(browser: Browser, stack: Stack, seeded: Clients) -> None:
    # Given a reviewer on the queue
    page = person(browser, stack, seeded.tenant, ("reviewer",), "dan.reviewer", "/review?type=procedural")
    expect(page.locator("[data-review-item]")).to_have_count(1)
    # When she moves to the item with j, opens the reason with r, types it and denies with d
    page.keyboard.press("j")
    page.keyboard.press("r")
    page.keyboard.type("Alice never asked for buffers")
    page.keyboard.press("Tab")  # to the item's Approve button: shortcuts are off only while typing
    page.keyboard.press("d")
    # Then the card reports the denial and memory holds it denied, with no memory written
    expect(page.locator("[data-resolved]")).to_contain_text("Denied")
    items = [i for i in pending(seeded) if "buffer" in i.decision.candidate.text]
    assert items == []
    assert not [m for m in seeded.memories() if "buffer" in m.text]


def test_deprecating_a_procedure_and_saving_a_canonical_one(browser: Browser, stack: Stack) -> None:
    # Given an officer of a tenant with no procedures yet
    tenant = fresh_tenant()
    page = person(browser, stack, tenant, ("reviewer", "reader"), "officer.kim", "/memory")
    expect(page.get_by_test_id("lp-empty")).to_have_text(
        "No learned procedures yet — teach the assistant a rule to get started"
    )
    # When she saves a canonical rule through the panel
    page.get_by_text("Teach a new rule").click()
    form = page.get_by_test_id("procedure-form").first
    form.get_by_label("Intent key").fill("psp_newly_formed_bank_statements")
    form.get_by_label("Title").fill("PSP bank statements")
    form.get_by_label("Scope").fill("PSP merchants")
    form.get_by_label("Trigger").fill("incorporated less than 3 months ago")
    form.get_by_label("Action").fill("request 3 months of bank statements")
    form.get_by_role("button", name="Save canonical rule").click()
    # Then a toast confirms it and the panel lists it active
    expect(page.locator(".toast")).to_contain_text("version 1 of psp_newly_formed_bank_statements")
    rule = page.get_by_test_id("procedure").filter(has_text="PSP bank statements")
    expect(rule).to_contain_text("active")
    expect(rule).to_contain_text("PSP merchants")
    # And a rule that would suppress screening is refused, with the guard's reason
    page.get_by_text("Teach a new rule").click()
    form.get_by_label("Intent key").fill("pep_shortcut")
    form.get_by_label("Title").fill("PEP shortcut")
    form.get_by_label("Scope").fill("existing customers")
    form.get_by_label("Trigger").fill("PEP hit on a known customer")
    form.get_by_label("Action").fill("skip screening")
    form.get_by_role("button", name="Save canonical rule").click()
    expect(page.get_by_role("alert").filter(has_text="never-suppress")).to_be_visible()
    # When she opens the rule in the side sheet and deprecates it with a reason
    rule.get_by_role("link", name="PSP bank statements").click()
    sheet = page.locator("#sheet")
    expect(sheet).to_be_visible()
    expect(sheet.get_by_test_id("procedure-lineage")).to_contain_text("v1")
    sheet.get_by_label("Reason").fill("replaced by the processor-history policy")
    sheet.get_by_role("button", name="Deprecate").click()
    # Then the panel no longer lists it active and the deprecated filter shows it
    expect(page.locator(".toast").filter(has_text="Deprecated")).to_be_visible()
    expect(page.get_by_test_id("lp-empty")).to_be_visible()
    with page.expect_response(lambda response: "status=deprecated" in response.url):
        page.get_by_label("Status").select_option("deprecated")
    expect(page.get_by_test_id("procedure").filter(has_text="PSP bank statements")).to_contain_text("deprecated")


def test_a_forget_receipt_completes_on_the_page(browser: Browser, stack: Stack, seeded: Clients) -> None:
    # Given an admin and Alice's learned memories
    page = person(browser, stack, seeded.tenant, ("admin",), "ada.admin", "/forget?scope=user&user=alice")
    # When she forgets Alice
    page.get_by_label("Reason (kept in the audit row)").fill("erasure request #42")
    page.get_by_role("button", name="Forget").click()
    # Then the receipt opens, and (without reloading the page) updates until every location is done
    expect(page.get_by_test_id("receipt")).to_be_visible()
    page.evaluate("window.memloopSamePage = true")
    expect(page.get_by_test_id("receipt-status")).to_contain_text("Complete", timeout=90_000)
    assert page.evaluate("window.memloopSamePage === true"), "the receipt was updated in place, not by a reload"
    steps = page.get_by_test_id("step")
    assert steps.count() > 0
    for index in range(steps.count()):
        expect(steps.nth(index)).to_contain_text("done")
    assert not [m for m in seeded.memories() if m.state == mem.MEMORY_STATE_ACTIVE]


def test_a_post_without_a_csrf_token_is_refused(browser: Browser, stack: Stack, seeded: Clients) -> None:
    # Given a signed-in reviewer (her session cookie is in the browser)
    page = person(browser, stack, seeded.tenant, ("reviewer",), "rita.reviewer", "/review")
    item_id = pending(seeded)[0].review_item_id
    # When a request carrying the cookie but no CSRF token tries to approve an item
    response = page.request.post(
        f"{stack.console_url}/review/{item_id}", form={"resolution": "approve", "reason": "forged"}
    )
    # Then it is refused and the item is still pending
    assert response.status == 403
    assert "CSRF" in response.text()
    assert item_id in {i.review_item_id for i in pending(seeded)}


def test_a_reviewer_of_another_tenant_sees_nothing(browser: Browser, stack: Stack, seeded: Clients) -> None:
    # Given items waiting in one tenant, and a reviewer of another
    assert pending(seeded)
    page = person(browser, stack, fresh_tenant(), ("reviewer", "reader"), "eve.reviewer", "/review")
    # Then her queue, her memory page and the JSON API show nothing of the first tenant
    expect(page.get_by_test_id("empty-queue")).to_be_visible()
    assert "alice" not in page.content().lower()
    page.goto(f"{stack.console_url}/memory")
    assert "alice" not in page.locator("main").inner_text().lower()
    listed = page.request.get(f"{stack.console_url}/api/memory/learned-procedures").json()
    assert listed == {"learned_procedures": []}


def test_a_reader_sees_no_actions_and_the_service_refuses_a_forged_post(
    browser: Browser, stack: Stack, seeded: Clients
) -> None:
    # Given a reader on the queue
    page = person(browser, stack, seeded.tenant, ("reader",), "rob.reader", "/review")
    expect(page.locator("[data-review-item]")).to_have_count(2)
    # Then no action is offered to her
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    expect(page.get_by_role("button", name="Deny")).to_have_count(0)
    page.goto(f"{stack.console_url}/memory/learned-procedures")
    expect(page.get_by_text("Teach a new rule")).to_have_count(0)
    # When she forges the approve POST, with her own valid CSRF token
    csrf = json.loads(page.locator("body").get_attribute("hx-headers") or "{}")["X-CSRF-Token"]
    item_id = pending(seeded)[0].review_item_id
    response = page.request.post(
        f"{stack.console_url}/review/{item_id}",
        form={"resolution": "approve", "reason": "forged", "csrf_token": csrf},
    )
    # Then memory itself refuses it, and the item is still pending
    assert response.status == 403
    assert "requires one of roles" in response.text()
    assert item_id in {i.review_item_id for i in pending(seeded)}


def test_the_memory_page_searches_and_the_health_page_reads_the_services_metrics(
    browser: Browser, stack: Stack, seeded: Clients
) -> None:
    # Given a reader on Alice's memory page
    page = person(browser, stack, seeded.tenant, ("reader",), "rob.reader", "/memory/alice")
    expect(page.get_by_test_id("memory-row").filter(has_text="09:00")).to_have_count(1)
    # When she searches
    page.get_by_role("searchbox", name="Search").fill("when can I schedule meetings")
    page.get_by_role("searchbox", name="Search").press("Enter")
    # Then the best match is the active meeting window
    expect(page.get_by_role("table").locator("caption")).to_contain_text("Best matches")
    expect(page.get_by_test_id("memory-row").first).to_contain_text("09:00")
    # And the health page shows outbox age, consumer lag and DLQ depth read from the services
    page.goto(f"{stack.console_url}/health")
    for metric in (
        "memloop_outbox_oldest_age_seconds",
        "memloop_worker_consumer_pending",
        "memloop_worker_dlq_depth",
    ):
        figure = page.locator(f"[data-metric='{metric}']")
        expect(figure).to_have_count(1)
        expect(figure.locator("td").nth(2)).to_have_text(re.compile(r"^\d+(\.\d+)?(e[+-]?\d+)?$"))
