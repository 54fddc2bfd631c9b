"""`memloop demo` (what `make demo` runs) ends on the console's review queue with Alice's items waiting:
the printed URL and token work in a real browser while the demo holds the stack up."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.console_support import new_page, sign_in
from tests.helpers import TestInfra

pytestmark = pytest.mark.e2e


def test_the_demo_ends_with_the_review_queue_url_where_alices_items_wait(
    infra: TestInfra, browser: Browser, tmp_path: Path
) -> None:
    # Given the demo, on this session's PostgreSQL and NATS, holding the stack after its evidence
    env = {**os.environ, "MEMLOOP_DATABASE_URL": infra.admin_db_url, "MEMLOOP_NATS_URL": infra.nats_url}
    command = [sys.executable, "-m", "services.cli.main", "demo", "--hold", "--embedder", "hashing"]
    demo = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "demo")], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 110
        assert demo.stdout is not None
        while not any(line.startswith("Review queue: ") for line in lines):
            line = demo.stdout.readline()
            assert line, f"the demo ended early: {''.join(lines[-20:])}"
            lines.append(line)
            assert time.monotonic() < deadline, "no review queue URL within 110 s"
        # When a person opens the printed URL and signs in with the printed token
        url = lines[-1].removeprefix("Review queue: ").strip()
        token = next(m.group(1) for line in lines if (m := re.search(r"sign in with: (\S+)", line)))
        base, path = re.match(r"(http://[^/]+)(/.*)", url).groups()  # type: ignore[union-attr]
        page = new_page(browser)
        sign_in(page, base, token, path)
        # Then Alice's two held items are there, each with its reasons
        expect(page.locator("[data-review-item]")).to_have_count(2)
        expect(page.get_by_test_id("count-alice")).to_have_text("2")
        expect(page.locator("[data-review-item]", has_text="buffer")).to_contain_text("PROCEDURAL_NEEDS_REVIEW")
    finally:
        demo.send_signal(signal.SIGINT)
        status = demo.wait(timeout=60)
        if demo.stdout is not None:
            demo.stdout.close()
    assert status == 0
