"""Bounded retry of a whole unit of work after a lost one-active race."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from services.memory.core.domain.errors import SupersessionConflict
from services.memory.core.service.ports import MemoryMetrics

T = TypeVar("T")


def retry_on_conflict(attempts: int, metrics: MemoryMetrics, unit: Callable[[], T]) -> T:
    """Run `unit` (which opens and commits its own transaction) until it does not lose a race.

    Each retry starts a fresh transaction that sees the winner's commit, so it supersedes the
    winner instead of colliding with it. After `attempts` losses the SupersessionConflict
    (ABORTED) reaches the caller, with nothing written.
    """
    for attempt in range(1, attempts + 1):
        try:
            return unit()
        except SupersessionConflict:
            if attempt == attempts:
                raise
            metrics.conflict_retried()
            time.sleep(random.uniform(0.0, 0.01 * attempt))
    raise AssertionError("unreachable")  # pragma: no cover
