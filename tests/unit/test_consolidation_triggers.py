"""The sleep-time triggers: after N fresh memories, or T seconds after the last one; 0 disables each."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.memory.consolidation.service.ports import DueUser
from services.memory.consolidation.service.scheduler import Triggers

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
