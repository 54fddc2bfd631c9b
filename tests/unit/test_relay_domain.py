"""The relay's timing contract, subjects and backoff."""

from __future__ import annotations

import pytest

from services.relay.domain.model import RelayTiming, TimingError, backoff_seconds, subject_for


def test_default_timing_is_consistent_and_the_window_outlasts_the_horizon() -> None:
    timing = RelayTiming().check()
    assert timing.duplicate_window_seconds > timing.retry_horizon_seconds
    assert timing.retry_horizon_seconds >= timing.lease_seconds + timing.publish_timeout_seconds


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"duplicate_window_seconds": 600.0}, "duplicate window"),
        ({"retry_horizon_seconds": 20.0}, "retry horizon"),
        ({"lease_seconds": 5.0}, "lease"),
        ({"publish_timeout_seconds": 0.0}, "positive"),
    ],
)
def test_inconsistent_timing_is_refused_naming_the_broken_rule(changes: dict[str, float], message: str) -> None:
    with pytest.raises(TimingError, match=message):
        RelayTiming(**changes).check()


def test_subject_routes_by_tenant_and_neutralises_subject_syntax() -> None:
    assert subject_for("memloop", "acme") == "memloop.learning.acme"
    assert subject_for("p", "a.b *>") == "p.learning.a_b___"
    assert subject_for("p", "") == "p.learning._"


def test_backoff_grows_and_is_capped() -> None:
    pauses = [backoff_seconds(n, base=0.1, maximum=5.0) for n in range(10)]
    assert pauses[0] == 0.0 and pauses[1] == 0.1 and pauses[2] == 0.2
    assert pauses == sorted(pauses) and pauses[-1] == 5.0
