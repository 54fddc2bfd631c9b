"""The JetStream side of the worker: pull deliveries in batches, prepare and apply each batch
together, settle each event on its own.

A batch is up to N messages or whatever arrived within T ms of the first (`LearningConsumer`).
Its read-only steps share one call per peer (`services.worker.service.process_batch`); then its
ready events are applied by one BatchApplyLearning per tenant (one memory transaction), and every
message is settled by its own item's outcome: success → `ack` (only after memory committed);
failure → `services.worker.service.retry.on_failure` says `nak(delay)` or dead-letter. A delivery
that cannot even be parsed is dead-lettered at once. So one slow, failing or malformed event never
acks, naks or blocks another beyond its batch's shared calls; `in_progress` heartbeats keep every
unsettled message of a long batch from redelivery.

Tracing: every message keeps its own consumer span continuing its trace. The batch's shared calls
run in a `worker.process_batch` span and its apply in a `worker.apply_batch` span, each a child of
the first event's span that links to the others (OpenTelemetry's convention for batch processing).
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from opentelemetry import trace

from services.common import telemetry
from services.common.redaction import Redactor
from services.worker.adapters import metrics
from services.worker.domain.extraction import CandidateExtractor
from services.worker.entrypoints.messages import parse_learning_event
from services.worker.entrypoints.settle import Clock, DeadLetterSink, FirstSeen, settle_failure, settle_success
from services.worker.service.model import LearningEventView, PermanentError, ProcessResult, WorkerError
from services.worker.service.process_batch import apply_batch, prepare_batch
from services.worker.service.process_event import LearningPorts, Prepared, ReadyToApply
from services.worker.service.retry import RetryPolicy, as_worker_error, on_failure

_log = logging.getLogger(__name__)

# nats-py asks the server for `timeout` less 0.1 ms: a shorter wait is no fetch at all
_SHORTEST_FETCH = 0.001
STALE_FILL_SECONDS = 0.05
"""How long a batch whose first message already waited the batch window in the stream still
collects what the server holds (`LearningConsumer._pull`)."""

__all__ = ["DeadLetterSink", "DeliveryHandler", "FirstSeen", "LearningConsumer"]


@dataclass
class _Delivery:
    """One message of a batch: its delivery facts, its parsed event (or why not), its span."""

    msg: Msg
    attempts: int
    sequence: int
    first_seen: float
    event: LearningEventView | None
    malformed: PermanentError | None
    span: trace.Span
    settled: bool = False
    finishing: bool = False  # `_finish` owns (and ends) the span from here on


class DeliveryHandler:
    """Handles a batch of deliveries end to end. Never raises (bar cancellation)."""

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
        """One delivery: a batch of one."""
        await self.handle_batch([msg])

    async def handle_batch(self, msgs: Sequence[Msg]) -> None:
        started = self._clock()
        metrics.BATCH_SIZE.observe(len(msgs))
        deliveries = [self._open(msg) for msg in msgs]
        heartbeat = asyncio.create_task(self._heartbeats(deliveries))
        try:
            parsed = [d for d in deliveries if d.event is not None]
            prepared = await self._apply(parsed, await self._prepare(parsed))
            await asyncio.gather(
                *(self._finish(d, p, started) for d, p in zip(parsed, prepared, strict=True)),
                *(
                    self._finish(d, d.malformed or PermanentError("MALFORMED_EVENT"), started)
                    for d in deliveries
                    if d.event is None
                ),
            )
        finally:
            heartbeat.cancel()
            for delivery in deliveries:
                if not delivery.finishing:  # cancelled before settling: JetStream redelivers after AckWait
                    delivery.span.end()

    def _open(self, msg: Msg) -> _Delivery:
        attempts = msg.metadata.num_delivered or 1
        sequence = msg.metadata.sequence.stream
        first_seen = self._first_seen.mark(sequence)
        try:
            event: LearningEventView | None = parse_learning_event(msg.data)
            malformed: PermanentError | None = None
        except PermanentError as exc:
            event, malformed = None, exc
        span = telemetry.start_span_from_headers(
            "worker.process_event",
            _trace_headers(msg, event),
            **{"messaging.system": "nats", "messaging.destination.name": msg.subject, "memloop.attempt": attempts},
        )
        if event is not None:
            span.set_attribute("memloop.event_id", event.event_id)
            if not event.trace_id:  # candidates and memory rows must name a trace: this one
                event = replace(event, trace_id=telemetry.span_trace_id(span))
        return _Delivery(msg, attempts, sequence, first_seen, event, malformed, span)

    async def _prepare(self, parsed: list[_Delivery]) -> list[Prepared]:
        """The batch's shared calls, in a span of the first event's trace linking the others."""
        if not parsed:
            return []
        links = [trace.Link(d.span.get_span_context()) for d in parsed[1:]]
        tracer = trace.get_tracer("memloop")
        parent = trace.set_span_in_context(parsed[0].span)
        with tracer.start_as_current_span("worker.process_batch", context=parent, links=links) as span:
            span.set_attribute("memloop.batch_size", len(parsed))
            events = [d.event for d in parsed if d.event is not None]
            return await prepare_batch(events, self._ports, redactor=self._redactor, extractor=self._extractor)

    async def _apply(self, parsed: list[_Delivery], prepared: list[Prepared]) -> list[ProcessResult | BaseException]:
        """Every ready event of the batch in one BatchApplyLearning per tenant (one memory
        transaction), in a span of the first ready event's trace linking the others."""
        ready = [(i, p) for i, p in enumerate(prepared) if isinstance(p, ReadyToApply)]
        results: list[ProcessResult | BaseException] = [
            p if not isinstance(p, ReadyToApply) else PermanentError("NOT_APPLIED") for p in prepared
        ]
        if not ready:
            return results
        first = parsed[ready[0][0]].span
        links = [trace.Link(parsed[i].span.get_span_context()) for i, _ in ready[1:]]
        tracer = trace.get_tracer("memloop")
        with tracer.start_as_current_span(
            "worker.apply_batch", context=trace.set_span_in_context(first), links=links
        ) as span:
            span.set_attribute("memloop.batch_size", len(ready))
            applied = await apply_batch([p for _, p in ready], self._ports)
        for (index, _), outcome in zip(ready, applied, strict=True):
            results[index] = outcome
        return results

    async def _finish(self, delivery: _Delivery, prepared: ProcessResult | BaseException, started: float) -> None:
        """Settle the message by its own outcome (memory committed it, if it succeeded), in its span."""
        event_id = delivery.event.event_id if delivery.event else ""
        delivery.finishing = True
        with trace.use_span(delivery.span, end_on_exit=True):
            token = telemetry.current_event_id.set(event_id)
            try:
                if isinstance(prepared, ProcessResult):
                    result = prepared
                else:
                    raise prepared if isinstance(prepared, Exception) else as_worker_error(prepared)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                outcome = await self._failed(delivery, exc, event_id)
            else:
                outcome = await settle_success(delivery.msg, result)
            finally:
                telemetry.current_event_id.reset(token)
            delivery.settled = True
            if outcome != "retry":
                self._first_seen.forget(delivery.sequence)
            delivery.span.set_attribute("memloop.result", outcome)
        metrics.DELIVERIES.labels(outcome).inc()
        metrics.PROCESSING_SECONDS.labels(outcome).observe(self._clock() - started)

    async def _failed(self, delivery: _Delivery, exc: Exception, event_id: str) -> str:
        error = as_worker_error(exc)
        if not isinstance(exc, WorkerError):
            # A bug: keep the frames for the developer, drop the message (it might quote content).
            frames = "".join(traceback.format_tb(exc.__traceback__))
            _log.error("unexpected %s at\n%s", type(exc).__name__, frames)
        action = on_failure(
            error, attempts=delivery.attempts, elapsed=self._clock() - delivery.first_seen, policy=self._retry
        )
        return await settle_failure(
            delivery.msg,
            action,
            event_id=event_id,
            attempts=delivery.attempts,
            dead_letters=self._dead_letters,
            retry=self._retry,
        )

    async def _heartbeats(self, deliveries: list[_Delivery]) -> None:
        """Tell JetStream every `heartbeat_interval` that each unsettled message is in progress."""
        while True:
            await asyncio.sleep(self._heartbeat_interval)
            for delivery in deliveries:
                if delivery.settled:
                    continue
                try:
                    await delivery.msg.in_progress()
                except nats.errors.Error as exc:
                    _log.warning("in_progress heartbeat failed: %s", type(exc).__name__)


def _trace_headers(msg: Msg, event: LearningEventView | None) -> dict[str, str]:
    """The delivery's trace context; without one (a hand-published event), the event's own trace id."""
    headers = dict(msg.headers or {})
    if "traceparent" not in headers and event is not None and len(event.trace_id) == 32:
        headers["traceparent"] = telemetry.traceparent_for(event.trace_id)
    return headers


class LearningConsumer:
    """Pulls batches from the durable consumer, with at most `concurrency` events in flight."""

    def __init__(
        self,
        subscription: JetStreamContext.PullSubscription,
        handle_batch: Callable[[list[Msg]], Coroutine[Any, Any, None]],
        *,
        concurrency: int | Callable[[], int],
        batch_size: int = 1,
        batch_wait: float = 0.025,
        fetch_timeout: float = 2.0,
    ) -> None:
        """`concurrency` may be a callable read before every fetch: the back-pressure limit
        (`services/worker/service/backpressure.py`) lowers it while serving is overloaded. A batch
        is at most `batch_size` messages and never more than the free part of the limit."""
        self._subscription = subscription
        self._handle_batch = handle_batch
        self._concurrency: Callable[[], int] = concurrency if callable(concurrency) else (lambda: concurrency)
        self._batch_size = batch_size
        self._batch_wait = batch_wait
        self._fetch_timeout = fetch_timeout
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Fetch and dispatch until `stop` is set. In-flight batches are left to `drain`."""
        while not stop.is_set():
            free = self._concurrency() - self._in_flight
            if free <= 0:
                await asyncio.wait(self._tasks, timeout=self._fetch_timeout, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                messages = await self._pull(min(free, self._batch_size))
            except (nats.errors.TimeoutError, TimeoutError):
                metrics.EMPTY_PULLS.inc()
                continue
            except nats.errors.Error as exc:
                _log.warning("fetch failed (%s); retrying in 1 s", type(exc).__name__)
                await asyncio.sleep(1.0)
                continue
            self._dispatch(messages)

    async def _pull(self, most: int) -> list[Msg]:
        """Up to `most` messages: wait up to the fetch timeout for the first, then fill the batch
        for at most `batch_wait` from it. nats-py's `fetch(batch, timeout)` returns at once with what
        the server holds, else lingers until the batch fills or time is up; so one fetch after the
        first took only what had arrived, and under a steady stream of events (the relay publishes
        them as serving commits) the batches stayed at a few events each, with every peer call,
        transaction and index catch-up of a batch paid per few events (bench_pipeline_ab, back-pressure
        off, 400-event bursts: 6-15 events a batch). Fetching again until the batch is full or the
        wait is over bounds an event's extra wait by `batch_wait`, as before for a lone event.

        The time the first message already spent in the stream counts towards that wait: a batch
        that begins with a message published `batch_wait` ago or more waits only STALE_FILL_SECONDS
        (the server's deliveries of what it holds take a few ms; a fetch that returns at once got
        a sixth of a batch). A backlog fills its batches within that anyway; what this spares is
        the end of a burst, whose last part-batch waited a whole window for messages that were not
        coming (1 s of a 1,000-event burst's 3.7 s through the hashing pipeline), and redeliveries."""
        messages = await self._subscription.fetch(batch=1, timeout=self._fetch_timeout)
        deadline = time.monotonic() + (self._fill_wait(messages[0]) if messages else 0.0)
        while len(messages) < most:
            left = deadline - time.monotonic()
            if left < _SHORTEST_FETCH:
                break
            try:
                messages += await self._subscription.fetch(batch=most - len(messages), timeout=left)
            except (nats.errors.TimeoutError, TimeoutError):
                break
            except nats.errors.Error as exc:  # keep what we have: it is handled now, not after AckWait
                _log.warning("fetching the rest of a batch failed (%s)", type(exc).__name__)
                break
        return messages

    def _fill_wait(self, first: Msg) -> float:
        """How long a batch beginning with `first` may wait to fill: `batch_wait` less the time
        `first` has been in the stream (its JetStream timestamp), never below STALE_FILL_SECONDS
        nor above `batch_wait` (a worker clock behind the server's cannot stretch it)."""
        floor = min(self._batch_wait, STALE_FILL_SECONDS)
        try:
            published = first.metadata.timestamp.timestamp()
        except (nats.errors.Error, ValueError):  # not a JetStream delivery, or a malformed timestamp
            return self._batch_wait  # no JetStream metadata: wait as for a fresh message
        return min(self._batch_wait, max(floor, self._batch_wait - (time.time() - published)))

    def _dispatch(self, messages: list[Msg]) -> None:
        if not messages:
            return
        self._in_flight += len(messages)
        task = asyncio.create_task(self._handle_batch(messages))
        self._tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            self._in_flight -= len(messages)

        task.add_done_callback(done)

    async def drain(self, timeout: float) -> None:
        """Let in-flight batches finish within `timeout`; cancel the rest (they are redelivered)."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)

    async def release(self) -> None:
        """Drop the pull subscription's inbox (the durable consumer stays), after `drain`.

        nats-py's `fetch` takes already-buffered messages off the subscription's queue without
        marking them done, and the client's `drain()` waits for that queue to be done: with the
        subscription still open, every worker's shutdown waited out its whole NATS drain bound.
        Acks travel on the connection, not the subscription, so nothing in flight needs it."""
        await self._subscription.unsubscribe()
