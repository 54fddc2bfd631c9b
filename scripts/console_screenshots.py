"""`make screenshots`: every console page at 1280 px and 390 px wide, into docs/console/.

Starts the whole stack (embedded PostgreSQL and NATS, the hashing embedder for speed), sends
Alice's mailbox and her two review mails, backfills the legacy procedures block, then drives
Debian's chromium through each page as a signed-in admin-reviewer. Leaves nothing running.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page  # noqa: E402

from services.cli.alice import run_alice  # noqa: E402
from services.cli.alice_review import queue_alice_reviews  # noqa: E402
from services.cli.stack import Stack, StackSpec  # noqa: E402
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp  # noqa: E402
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as lp_grpc  # noqa: E402
from services.common.gen.memloop.v1 import memory_service_pb2 as mem  # noqa: E402
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as mem_grpc  # noqa: E402
from services.common.grpc_client import sync_channel  # noqa: E402
from tests.e2e.console_support import launch_browser, new_page, sign_in  # noqa: E402

WIDTHS = (1280, 390)
TENANT = "acme"
ROLES = ("reader", "reviewer", "decide", "admin")


def _seed(stack: Stack) -> dict[str, str]:
    serving, memory = stack.services["serving"].target, stack.services["memory"].target
    token = stack.token(TENANT, ROLES, subject="officer.kim")
    run_alice(serving, memory, stack.token(TENANT), forget=False)
    queue_alice_reviews(serving, memory, stack.token(TENANT))
    legacy = json.loads((ROOT / "tests" / "fixtures" / "legacy_learned_procedures.json").read_text())
    rules = legacy["block"]["rules"]
    with sync_channel(memory, token) as channel:
        procedures = lp_grpc.LearnedProcedureServiceStub(channel)
        procedures.BackfillLearnedProcedures(
            lp.BackfillLearnedProceduresRequest(tenant=TENANT, rules=[lp.LegacyRule(**r) for r in rules]), timeout=30
        )
        active = procedures.ListLearnedProcedures(lp.ListLearnedProceduresRequest(tenant=TENANT), timeout=30)
        memories = mem_grpc.MemoryServiceStub(channel).ListMemories(
            mem.ListMemoriesRequest(tenant=TENANT, user="alice", states=[mem.MEMORY_STATE_ACTIVE]), timeout=30
        )
    window = next(m for m in memories.memories if m.intent_key == "meeting_time_window")
    episode = next(m for m in memories.memories if m.intent_key != "meeting_time_window")
    return {
        "memory": window.memory_id,
        "forget": episode.memory_id,
        "procedure": active.learned_procedures[0].procedure_id,
        "legacy": json.dumps(rules, indent=1),
    }


def _shoot(page: Page, out: Path, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="console_screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "console")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memloop-shots-") as data_dir:
        stack = Stack(StackSpec(data_dir=Path(data_dir), embedder="hashing"))
        try:
            stack.start()
            seeded = _seed(stack)
            base = stack.console_url
            browser_run = launch_browser()
            browser = next(browser_run)
            page = new_page(browser)
            page.goto(f"{base}/login")
            _shoot(page, args.out, "login")
            sign_in(page, base, stack.token(TENANT, ROLES, subject="officer.kim"), "/review")
            _shoot(page, args.out, "review-queue")
            page.goto(f"{base}/memory/alice")
            page.get_by_test_id("lp-list").wait_for()
            _shoot(page, args.out, "memory")
            page.goto(f"{base}/memory/alice/m/{seeded['memory']}")
            _shoot(page, args.out, "memory-detail")
            page.goto(f"{base}/memory/learned-procedures")
            page.get_by_test_id("procedure").first.get_by_role("link").click()
            page.locator("#sheet").wait_for(state="visible")
            _shoot(page, args.out, "learned-procedures")
            page.goto(f"{base}/memory/learned-procedures/backfill")
            page.get_by_label("Legacy rules (JSON)").fill(seeded["legacy"])
            page.get_by_role("button", name="Preview").click()
            page.get_by_test_id("backfill-result").wait_for()
            _shoot(page, args.out, "backfill-preview")
            page.goto(f"{base}/forget?scope=memory&memory_id={seeded['forget']}")
            _shoot(page, args.out, "forget")
            page.get_by_label("Reason (kept in the audit row)").fill("Alice asked to forget the Bob meeting")
            page.get_by_role("button", name="Forget").click()
            page.locator("[data-complete='true']").wait_for(timeout=90_000)
            _shoot(page, args.out, "forget-receipt")
            page.goto(f"{base}/dead-letters")
            _shoot(page, args.out, "dead-letters")
            page.goto(f"{base}/health")
            _shoot(page, args.out, "health")
            next(browser_run, None)
        finally:
            stack.stop()
    for shot in sorted(args.out.glob("*.png")):
        print(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
