"""The chaos campaign's short profile (about 500 events) inside the test suite; `make chaos` runs 5,000.

Every promise of the campaign is asserted separately so a failure names the one that broke; the
table is printed either way (see tests/chaos/campaign.py for what is injected and checked).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.chaos.campaign import FAULTS, run_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]


def test_the_loop_keeps_its_promises_through_kills_restarts_and_cut_links(tmp_path: Path) -> None:
    # Given the whole stack on its own PostgreSQL and nats-server, and ~500 statements with faults
    events = int(os.environ.get("MEMLOOP_CHAOS_EVENTS", "500"))
    # When the campaign runs
    report = run_campaign(events, data_dir=tmp_path / "stack")
    print(report.table())
    # Then every kind of fault really happened, no process died on its own, and every promise held
    assert set(report.faults) == set(FAULTS), report.table()
    assert not report.unexpected_exits, report.table()
    assert report.committed == report.processed and report.missing == 0, report.table()
    assert report.double_applied == 0, report.table()
    assert report.duplicate_memories == 0 and report.multiple_active == 0, report.table()
    assert report.stale_winners == 0, report.table()
    assert report.resend_mismatches == 0, report.table()
    assert report.outbox_unpublished == 0, report.table()
    assert (report.consumer_pending, report.consumer_ack_pending) == (0, 0), report.table()
