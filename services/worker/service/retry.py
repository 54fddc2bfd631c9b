"""What to do with a delivery that failed: retry it later, or dead-letter it now.

JetStream's consumer `BackOff` only spaces redeliveries after an *ack timeout*; a `nak` is
redelivered at once unless it carries a delay. So the worker computes the delay itself
(exponential, capped, with jitter so a recovering dependency is not hit by every event at once)
and the consumer's server-side MaxDeliver stays unlimited: the decision to give up is taken here.

An event is dead-lettered after a transient failure only when BOTH its attempts reached
`max_deliver` AND at least `min_dead_letter_age` seconds passed since the worker first saw it.
Attempts alone would dead-letter a whole backlog during a one-minute outage when backoff is short;
age alone would dead-letter an event that was delivered once and sat in a queue. Permanent errors
(malformed event, rejected input, missing content) are dead-lettered at once: retrying cannot help.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from services.worker.service.model import PermanentError, TransientError, WorkerError


@dataclass(frozen=True)
class RetryPolicy:
    """The retry budget. Defaults dead-letter nothing during an outage shorter than five minutes."""

    max_deliver: int = 10
    min_dead_letter_age: float = 300.0
    backoff_initial: float = 1.0
    backoff_max: float = 60.0

    def backoff(self, attempts: int, rand: Callable[[], float] = random.random) -> float:
        """Delay before the next delivery after `attempts` failed ones ("equal jitter": [d/2, d])."""
        exponent = min(max(attempts - 1, 0), 30)
        ceiling = min(self.backoff_max, self.backoff_initial * float(1 << exponent))
        return ceiling / 2 + rand() * ceiling / 2


@dataclass(frozen=True)
class Retry:
    """Negatively acknowledge; JetStream redelivers after `delay` seconds."""

    delay: float
    error: WorkerError


@dataclass(frozen=True)
class DeadLetter:
    """Copy the message to the dead-letter stream with `reason`, then terminate the original."""

    reason: str
    error: WorkerError


FailureAction = Retry | DeadLetter

RETRIES_EXHAUSTED = "RETRIES_EXHAUSTED"


def on_failure(
    error: WorkerError,
    *,
    attempts: int,
    elapsed: float,
    policy: RetryPolicy,
    rand: Callable[[], float] = random.random,
) -> FailureAction:
    """Classify a failed delivery. `attempts` counts this one; `elapsed` is seconds since first seen."""
    if isinstance(error, PermanentError):
        return DeadLetter(reason=error.reason, error=error)
    if attempts >= policy.max_deliver and elapsed >= policy.min_dead_letter_age:
        return DeadLetter(reason=RETRIES_EXHAUSTED, error=error)
    return Retry(delay=policy.backoff(attempts, rand), error=error)


def as_worker_error(exc: BaseException) -> WorkerError:
    """Any failure as a WorkerError. An unexpected exception is a bug: retried, then dead-lettered.

    Only the exception's class name is kept — its message might quote content.
    """
    if isinstance(exc, WorkerError):
        return exc
    return TransientError("UNEXPECTED_ERROR", type(exc).__name__)
