"""The sleep-time triggers: after N fresh memories, or T seconds after the last one; 0 disables each."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest

from services.memory.consolidation.service.job import ConsolidationDeps
from services.memory.consolidation.service.ports import DueUser
from services.memory.consolidation.service.scheduler import ConsolidationScheduler, Triggers

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def state(fresh: int, idle_for: float | None) -> DueUser:
    last = None if idle_for is None else NOW - timedelta(seconds=idle_for)
    return DueUser("acme", "alice", fresh, last)


def test_the_count_rule_fires_at_n_fresh_memories_however_recent() -> None:
    triggers = Triggers(after_memories=20, idle_seconds=300, poll_seconds=5)
    assert not triggers.due(state(19, 0.0), NOW)
    assert triggers.due(state(20, 0.0), NOW)


def test_the_idle_rule_fires_t_seconds_after_the_last_memory() -> None:
    triggers = Triggers(after_memories=20, idle_seconds=300, poll_seconds=5)
    assert not triggers.due(state(1, 299.0), NOW)
    assert triggers.due(state(1, 300.0), NOW)


def test_nothing_fresh_is_never_due_and_zero_disables_a_rule() -> None:
    assert not Triggers(after_memories=1, idle_seconds=1, poll_seconds=5).due(state(0, 1000.0), NOW)
    assert not Triggers(after_memories=0, idle_seconds=300, poll_seconds=5).due(state(500, 0.0), NOW)
    assert not Triggers(after_memories=20, idle_seconds=0, poll_seconds=5).due(state(1, 10_000.0), NOW)


class _Activity:
    """A ConsolidationActivity that records which users' state the scheduler asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.reads = 0

    def users_with_new_memories(self, after_row_id: int) -> tuple[list[tuple[str, str]], int]:
        return [("acme", "alice"), ("acme", "bob")], after_row_id + 2

    def due_states(self, users: Sequence[tuple[str, str]]) -> list[DueUser]:
        self.reads += 1
        self.asked += users
        return [DueUser(tenant, user, 0, None) for tenant, user in users]

    def running_jobs(self, *, started_before: datetime) -> list[tuple[str, str]]:
        return []


@pytest.mark.parametrize(("after", "idle", "asked"), [(0, 0, 0), (20, 0, 2), (0, 300, 2)])
def test_with_both_rules_off_the_scheduler_watches_no_user(after: int, idle: float, asked: int) -> None:
    # Given: two users with new memories
    activity = _Activity()
    deps = cast(ConsolidationDeps, None)  # no job can be due: fresh is 0 for everyone
    scheduler = ConsolidationScheduler(activity, deps, Triggers(after, idle, poll_seconds=5), clock=lambda: NOW)
    # When: one pass runs
    assert scheduler.tick() == []
    # Then: their state is read only while some rule could make them due, all of them in one read
    assert len(activity.asked) == asked
    assert activity.reads == (1 if asked else 0)
