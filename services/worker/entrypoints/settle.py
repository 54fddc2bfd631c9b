"""Settling one JetStream delivery: ack after memory committed, nak with a delay, or dead-letter.

Each message of a batch is settled on its own, by its own outcome: one event's failure never acks
or naks another. The decision between retry and dead letter is `services.worker.service.retry`'s;
this module carries it out and counts it.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import nats.errors
from nats.aio.msg import Msg

from services.worker.adapters import metrics
from services.worker.service.model import ProcessResult
from services.worker.service.retry import DeadLetter, FailureAction, RetryPolicy

_log = logging.getLogger(__name__)

Clock = Callable[[], float]


class DeadLetterSink(Protocol):
    """Where a failed delivery goes for good (`DeadLetterPublisher` in production)."""

    async def dead_letter(self, msg: Msg, *, event_id: str, reason: str, attempts: int, last_error: str) -> None:
        """File `msg` with its reason and terminate it; raise if it could not be filed."""
        ...


class FirstSeen:
    """When this process first saw each stream message, for the dead-letter age rule.

    JetStream tells how often a message was delivered, not when it was first delivered (its
    timestamp is when it was *stored*, which for a backlog can be long before the outage began).
    A redelivery this process has not seen (after a restart, or first seen by another replica)
    starts the clock now: that can only postpone a dead letter, never bring one forward.
    Bounded, oldest entries evicted first.
    """

    def __init__(self, clock: Clock = time.monotonic, capacity: int = 10_000) -> None:
        self._clock = clock
        self._capacity = capacity
        self._seen: OrderedDict[int, float] = OrderedDict()

    def mark(self, sequence: int) -> float:
        """The first-seen time of `sequence`, recording now if it is new."""
        if sequence not in self._seen:
            self._seen[sequence] = self._clock()
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
        return self._seen[sequence]

    def forget(self, sequence: int) -> None:
        self._seen.pop(sequence, None)


async def settle_success(msg: Msg, result: ProcessResult) -> str:
    """Ack (memory has committed, or had before); the outcome word for metrics and the span."""
    try:
        await msg.ack()
    except nats.errors.Error as exc:
        # Memory committed; a lost ack means a redelivery that memory answers "already processed".
        _log.warning("ack failed (%s); the redelivery will be a no-op", type(exc).__name__)
    if result.already_processed:
        _log.info("event already processed: acknowledged without work")
        return "duplicate"
    for outcome, count in result.count_by_outcome().items():
        if count:
            metrics.DECISIONS.labels(outcome.value).inc(count)
    _log.info(
        "event applied: %s",
        ", ".join(f"{outcome.value}={count}" for outcome, count in result.count_by_outcome().items()),
    )
    return "processed"


async def settle_failure(
    msg: Msg, action: FailureAction, *, event_id: str, attempts: int, dead_letters: DeadLetterSink, retry: RetryPolicy
) -> str:
    """Dead-letter or nak with the action's delay; a dead letter that cannot be filed is retried."""
    if isinstance(action, DeadLetter):
        try:
            await dead_letters.dead_letter(
                msg, event_id=event_id, reason=action.reason, attempts=attempts, last_error=action.error.describe()
            )
        except (nats.errors.Error, TimeoutError) as exc:
            _log.error("dead-lettering failed (%s); retrying the delivery later", type(exc).__name__)
            await nak(msg, retry.backoff(attempts))
            return "retry"
        metrics.DEAD_LETTERS.labels(action.reason).inc()
        _log.error(
            "event dead-lettered after %d attempt(s) as %s; last error: %s",
            attempts,
            action.reason,
            action.error.describe(),
        )
        return "dead_lettered"
    _log.warning("attempt %d failed: %s; retrying in %.1f s", attempts, action.error.describe(), action.delay)
    await nak(msg, action.delay)
    return "retry"


async def nak(msg: Msg, delay: float) -> None:
    try:
        await msg.nak(delay=delay)
    except nats.errors.Error as exc:
        _log.warning("nak failed (%s); redelivery after AckWait instead", type(exc).__name__)
