"""bench_serving's "the loop keeps up" is measured, not written into the row's label."""

from __future__ import annotations

import pytest

from bench.bench_serving import BOUNDED_BACKLOG_SECONDS, HIGH_RATE, LOW_RATE, _pace, keeps_up


@pytest.mark.parametrize("rate", [LOW_RATE, HIGH_RATE])
def test_a_backlog_of_a_few_seconds_of_requests_keeps_up_and_a_longer_one_is_behind(rate: float) -> None:
    bound = int(rate * BOUNDED_BACKLOG_SECONDS)
    assert keeps_up(0, rate) and keeps_up(bound, rate)
    assert not keeps_up(bound + 1, rate)
    assert _pace(bound, rate) == f"loop keeps up: backlog {bound}"
    assert _pace(bound + 1, rate) == f"loop behind: backlog {bound + 1}"


def test_the_runs_of_2026_12_05_kept_up_and_the_2026_11_30_one_fell_behind() -> None:
    # 50 req/s, 20 s windows: 64 and 66 events still to learn on 2026-12-05; 767 before issue 15
    assert keeps_up(64, HIGH_RATE) and keeps_up(66, HIGH_RATE)
    assert not keeps_up(767, HIGH_RATE)
