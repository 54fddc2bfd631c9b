"""How the client retries: the same request, again, with exponential backoff and jitter, until a
total deadline.

Only UNAVAILABLE and DEADLINE_EXCEEDED are retried: the call may not have reached the server, or
its answer may have been lost. Retrying is safe because every call is either a read or carries an
idempotency key chosen once per call (record's request_id, forget's request_id): a retry of a
request that did commit gets the first result back, marked `replayed`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """`total_deadline` bounds a call, retries and waits included; each attempt gets at most
    `attempt_timeout` of it. Waits grow from `initial_backoff` by `multiplier` up to `max_backoff`;
    each wait is drawn uniformly from [(1 - jitter) * w, w], so clients that failed together do not
    retry together."""

    total_deadline: float = 30.0
    attempt_timeout: float = 10.0
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.5
    max_attempts: int = 0
    """0: as many attempts as fit in the total deadline."""

    def __post_init__(self) -> None:
        if self.total_deadline <= 0 or self.attempt_timeout <= 0:
            raise ValueError("total_deadline and attempt_timeout must be positive")
        if not 0 <= self.jitter <= 1 or self.multiplier < 1 or self.initial_backoff < 0:
            raise ValueError("jitter must be in [0, 1], multiplier at least 1, initial_backoff not negative")

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The waits before the second, third, ... attempt (endless; the deadline stops the caller)."""
        draw = rng or random.Random()
        ceiling = self.initial_backoff
        while True:
            yield draw.uniform((1.0 - self.jitter) * ceiling, ceiling)
            ceiling = min(self.max_backoff, ceiling * self.multiplier)
