"""The JetStream side of the worker: pull deliveries, hand each to the use case, settle it.

Settling is the only decision made here, and it is delegated too: success → `ack` (only after
memory confirmed); failure → `services.worker.service.retry.on_failure` says `nak(delay)` or
dead-letter. A delivery that cannot even be parsed is dead-lettered at once. Each delivery runs
in its own task under a concurrency bound, so one slow, failing or malformed event never blocks
the ones behind it; `in_progress` heartbeats keep a long event from being redelivered meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import Any, Protocol

import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from services.common import telemetry
from services.common.redaction import Redactor
from services.worker.adapters import metrics
from services.worker.domain.extraction import CandidateExtractor
from services.worker.entrypoints.messages import parse_learning_event
from services.worker.service.model import LearningEventView, PermanentError, ProcessResult, WorkerError
from services.worker.service.process_event import LearningPorts, process_event
from services.worker.service.retry import DeadLetter, FailureAction, RetryPolicy, as_worker_error, on_failure

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


class DeliveryHandler:
    """Handles one delivery end to end: trace, parse, process, settle. Never raises (bar cancellation)."""

    def __init__(
        self,
        *,
        ports: LearningPorts,
        redactor: Redactor,
        extractor: CandidateExtractor,
        dead_letters: DeadLetterSink,
        retry: RetryPolicy,
        heartbeat_interval: float,
        clock: Clock = time.monotonic,
    ) -> None:
        self._ports = ports
        self._redactor = redactor
        self._extractor = extractor
        self._dead_letters = dead_letters
        self._retry = retry
        self._heartbeat_interval = heartbeat_interval
        self._clock = clock
        self._first_seen = FirstSeen(clock)

    async def handle(self, msg: Msg) -> None:
        started = self._clock()
        attempts = msg.metadata.num_delivered or 1
        sequence = msg.metadata.sequence.stream
        first_seen = self._first_seen.mark(sequence)
        try:
            event: LearningEventView | None = parse_learning_event(msg.data)
            failure: WorkerError | None = None
        except PermanentError as malformed:
            event, failure = None, malformed
        attributes = {
            "messaging.system": "nats",
            "messaging.destination.name": msg.subject,
            "memloop.attempt": attempts,
        }
        with telemetry.span_from_headers("worker.process_event", _trace_headers(msg, event), **attributes) as span:
            token = telemetry.current_event_id.set(event.event_id if event else "")
            try:
                if event is None:
                    raise failure or PermanentError("MALFORMED_EVENT")
                if not event.trace_id:  # candidates and memory rows must name a trace: this one
                    event = replace(event, trace_id=telemetry.current_trace_id())
                span.set_attribute("memloop.event_id", event.event_id)
                work = process_event(event, self._ports, redactor=self._redactor, extractor=self._extractor)
                result = await self._with_heartbeats(msg, work)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = as_worker_error(exc)
                if not isinstance(exc, WorkerError):
                    # A bug: keep the frames for the developer, drop the message (it might quote content).
                    frames = "".join(traceback.format_tb(exc.__traceback__))
                    _log.error("unexpected %s at\n%s", type(exc).__name__, frames)
                action = on_failure(error, attempts=attempts, elapsed=self._clock() - first_seen, policy=self._retry)
                event_id = event.event_id if event else ""
                outcome = await self._settle_failure(msg, action, event_id=event_id, attempts=attempts)
            else:
                outcome = await self._settle_success(msg, result)
            finally:
                telemetry.current_event_id.reset(token)
            if outcome != "retry":
                self._first_seen.forget(sequence)
            span.set_attribute("memloop.result", outcome)
        metrics.DELIVERIES.labels(outcome).inc()
        metrics.PROCESSING_SECONDS.labels(outcome).observe(self._clock() - started)

    async def _with_heartbeats(self, msg: Msg, work: Awaitable[ProcessResult]) -> ProcessResult:
        """Run `work` while telling JetStream every `heartbeat_interval` that the event is in progress."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(self._heartbeat_interval)
                try:
                    await msg.in_progress()
                except nats.errors.Error as exc:
                    _log.warning("in_progress heartbeat failed: %s", type(exc).__name__)

        heartbeat = asyncio.create_task(beat())
        try:
            return await work
        finally:
            heartbeat.cancel()

    async def _settle_success(self, msg: Msg, result: ProcessResult) -> str:
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

    async def _settle_failure(self, msg: Msg, action: FailureAction, *, event_id: str, attempts: int) -> str:
        if isinstance(action, DeadLetter):
            try:
                await self._dead_letters.dead_letter(
                    msg, event_id=event_id, reason=action.reason, attempts=attempts, last_error=action.error.describe()
                )
            except (nats.errors.Error, TimeoutError) as exc:
                _log.error("dead-lettering failed (%s); retrying the delivery later", type(exc).__name__)
                await _nak(msg, self._retry.backoff(attempts))
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
        await _nak(msg, action.delay)
        return "retry"


def _trace_headers(msg: Msg, event: LearningEventView | None) -> dict[str, str]:
    """The delivery's trace context; without one (a hand-published event), the event's own trace id."""
    headers = dict(msg.headers or {})
    if "traceparent" not in headers and event is not None and len(event.trace_id) == 32:
        headers["traceparent"] = telemetry.traceparent_for(event.trace_id)
    return headers


async def _nak(msg: Msg, delay: float) -> None:
    try:
        await msg.nak(delay=delay)
    except nats.errors.Error as exc:
        _log.warning("nak failed (%s); redelivery after AckWait instead", type(exc).__name__)


class LearningConsumer:
    """Pulls from the durable consumer and runs at most `concurrency` deliveries at once."""

    def __init__(
        self,
        subscription: JetStreamContext.PullSubscription,
        handle: Callable[[Msg], Coroutine[Any, Any, None]],
        *,
        concurrency: int | Callable[[], int],
        fetch_timeout: float = 2.0,
    ) -> None:
        """`concurrency` may be a callable read before every fetch: the back-pressure limit
        (`services/worker/service/backpressure.py`) lowers it while serving is overloaded."""
        self._subscription = subscription
        self._handle = handle
        self._concurrency: Callable[[], int] = concurrency if callable(concurrency) else (lambda: concurrency)
        self._fetch_timeout = fetch_timeout
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Fetch and dispatch until `stop` is set. In-flight deliveries are left to `drain`."""
        while not stop.is_set():
            free = self._concurrency() - len(self._tasks)
            if free <= 0:
                await asyncio.wait(self._tasks, timeout=self._fetch_timeout, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                messages = await self._subscription.fetch(batch=free, timeout=self._fetch_timeout)
            except (nats.errors.TimeoutError, TimeoutError):
                continue
            except nats.errors.Error as exc:
                _log.warning("fetch failed (%s); retrying in 1 s", type(exc).__name__)
                await asyncio.sleep(1.0)
                continue
            for msg in messages:
                task = asyncio.create_task(self._handle(msg))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float) -> None:
        """Let in-flight deliveries finish within `timeout`; cancel the rest (they are redelivered)."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
