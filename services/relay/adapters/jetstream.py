"""Publishing learning events to JetStream with nats-py, and keeping the learning stream configured.

The connection reconnects forever (`max_reconnect_attempts=-1`): a NATS outage makes rows wait in
the outbox, never fail for good. Publishes go out with `publish_async` (pipelined; the PubAck
arrives later on a shared reply subject); each gets a PRODUCER span whose parent is the serving
span that committed the event, and its `traceparent` travels in the message headers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import nats
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext, api
from nats.js.errors import BadRequestError, NotFoundError
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from services.common import telemetry
from services.common.nats_access import NatsAccess
from services.common.nats_urls import nats_servers
from services.relay.domain.model import OutboxRow, PublishReceipt, stream_subjects, subject_for

_log = logging.getLogger(__name__)
_tracer = trace.get_tracer("memloop.relay")


@dataclass(frozen=True)
class StreamSpec:
    """The learning stream as the relay requires it: file storage, a long duplicate window, and as
    many replicas as the deployment asks for (R3 on a three-node JetStream cluster)."""

    name: str
    subject_prefix: str
    duplicate_window_seconds: float
    replicas: int = 1

    def config(self) -> api.StreamConfig:
        return api.StreamConfig(
            name=self.name,
            subjects=stream_subjects(self.subject_prefix),
            storage=api.StorageType.FILE,
            retention=api.RetentionPolicy.LIMITS,
            duplicate_window=self.duplicate_window_seconds,
            num_replicas=self.replicas,
        )


async def connect_nats(
    url: str, *, name: str, connect_retry_seconds: float = 0.5, access: NatsAccess | None = None
) -> NatsClient:
    """Connect (retrying until the server answers), then reconnect forever after any drop."""
    state = {"down": False}

    async def disconnected() -> None:
        if not state["down"]:
            _log.warning("disconnected from NATS; reconnecting")
        state["down"] = True

    async def reconnected() -> None:
        state["down"] = False
        _log.info("reconnected to NATS")

    async def error(exc: Exception) -> None:
        _log.debug("NATS client error: %r", exc)

    while True:
        try:
            return await nats.connect(
                nats_servers(url),
                name=name,
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.25,
                connect_timeout=2,
                ping_interval=5,
                max_outstanding_pings=2,
                disconnected_cb=disconnected,
                reconnected_cb=reconnected,
                error_cb=error,
                **(access or NatsAccess()).connect_options(),
            )
        except Exception as exc:
            _log.info("NATS not reachable at %s (%s); retrying", url, exc)
            await asyncio.sleep(connect_retry_seconds)


async def ensure_stream(js: JetStreamContext, spec: StreamSpec) -> api.StreamInfo:
    """Create the stream, or widen an existing one to our subjects and duplicate window. Idempotent.

    Only the settings the relay depends on are changed on an existing stream (subjects, duplicate
    window, and replicas raised to the configured count, never lowered); anything else an operator
    configured is kept. Two relays racing to create it both succeed.
    """
    for _ in range(3):
        try:
            info = await js.stream_info(spec.name)
        except NotFoundError:
            try:
                return await js.add_stream(spec.config())
            except BadRequestError:
                continue  # created concurrently with another config: read it and update
        config = info.config
        subjects = list(config.subjects or [])
        missing = [s for s in stream_subjects(spec.subject_prefix) if s not in subjects]
        replicas = config.num_replicas or 1
        if (
            not missing
            and (config.duplicate_window or 0) >= spec.duplicate_window_seconds
            and replicas >= spec.replicas
        ):
            return info
        config.subjects = subjects + missing
        config.duplicate_window = max(config.duplicate_window or 0, spec.duplicate_window_seconds)
        config.num_replicas = max(replicas, spec.replicas)
        return await js.update_stream(config)
    raise RuntimeError(f"could not create or update stream {spec.name}")


class JetStreamPublisher:
    """Publisher port on nats-py. `send` never blocks on the PubAck; the returned future does."""

    def __init__(
        self,
        client: NatsClient,
        *,
        subject_prefix: str,
        stream: str,
        publish_timeout_seconds: float,
        max_in_flight: int,
    ) -> None:
        self._client = client
        self._js = client.jetstream(timeout=publish_timeout_seconds, publish_async_max_pending=max_in_flight + 1)
        self._prefix = subject_prefix
        self._stream = stream
        self._timeout = publish_timeout_seconds

    @property
    def jetstream(self) -> JetStreamContext:
        return self._js

    @property
    def connected(self) -> bool:
        return bool(self._client.is_connected)

    async def wait_connected(self) -> None:
        while not self._client.is_connected:
            if self._client.is_closed:
                raise ConnectionError("NATS connection closed")
            await asyncio.sleep(0.1)

    async def send(self, row: OutboxRow) -> asyncio.Future[PublishReceipt]:
        subject = subject_for(self._prefix, row.tenant)
        span = _tracer.start_span("relay.publish", context=_parent_context(row), kind=SpanKind.PRODUCER)
        # Set one by one, not as start_span's dict: the SDK validates a dict argument through
        # isinstance checks against collections.abc, the costliest part of a span per message.
        span.set_attribute("messaging.system", "nats")
        span.set_attribute("messaging.destination.name", subject)
        span.set_attribute("memloop.event_id", row.event_id)
        span.set_attribute("memloop.tenant", row.tenant)
        headers = _headers(row, span.get_span_context())
        try:
            ack = await self._js.publish_async(subject, row.payload, headers=headers)
        except Exception as exc:
            _end_span(span, exc)
            raise
        # Callbacks and one timer per publish, no task: at thousands of events/s a task and a
        # wait_for per message would cost more than the publish itself.
        loop = asyncio.get_running_loop()
        receipt: asyncio.Future[PublishReceipt] = loop.create_future()
        timer = loop.call_later(self._timeout, _expire, ack)
        ack.add_done_callback(functools.partial(_settle, row, span, receipt, timer, self._timeout))
        return receipt


def _expire(ack: asyncio.Future[api.PubAck]) -> None:
    """No PubAck in time: cancelling the future also frees nats-py's pending slot."""
    if not ack.done():
        ack.cancel()


def _settle(
    row: OutboxRow,
    span: trace.Span,
    receipt: asyncio.Future[PublishReceipt],
    timer: asyncio.TimerHandle,
    timeout: float,
    ack: asyncio.Future[api.PubAck],
) -> None:
    timer.cancel()
    if receipt.done():
        return
    if ack.cancelled():
        error: BaseException = TimeoutError(f"no PubAck for {row.event_id} within {timeout:g}s")
    elif (failure := ack.exception()) is not None:
        error = failure
    else:
        pub_ack = ack.result()
        result = PublishReceipt(row.event_id, int(pub_ack.seq), bool(pub_ack.duplicate), datetime.now(UTC))
        span.set_attribute("messaging.nats.stream_sequence", result.stream_seq)
        span.set_attribute("memloop.duplicate", result.duplicate)
        span.end()
        receipt.set_result(result)
        return
    _end_span(span, error)
    receipt.set_exception(error)


def _parent_context(row: OutboxRow) -> Context | None:
    """The serving span that committed the event, as a remote parent (None when ids are malformed)."""
    try:
        trace_id = int(row.trace_id, 16)
        span_id = int(row.span_id, 16) if row.span_id else 1
    except ValueError:
        return None
    if len(row.trace_id) != 32 or not trace_id or not span_id:
        return None
    parent = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(parent))


def _headers(row: OutboxRow, span: SpanContext) -> dict[str, str]:
    """`Nats-Msg-Id`, and the W3C `traceparent` naming the publish span (what the tracecontext
    propagator writes, formatted directly: the relay has no baggage or tracestate to carry, and
    going through the global propagator per message costs more than the formatting).

    Without a recording tracer the span is not valid, and the header names the serving span."""
    headers = {api.Header.MSG_ID.value: row.event_id}
    if span.is_valid:
        headers["traceparent"] = f"00-{span.trace_id:032x}-{span.span_id:016x}-{span.trace_flags:02x}"
    elif len(row.trace_id) == 32:
        headers["traceparent"] = telemetry.traceparent_for(row.trace_id, row.span_id)
    return headers


def _end_span(span: trace.Span, exc: BaseException) -> None:
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
    span.end()
