"""Publishing learning events to JetStream with nats-py, and keeping the learning stream configured.

The connection reconnects forever (`max_reconnect_attempts=-1`): a NATS outage makes rows wait in
the outbox, never fail for good. Publishes are pipelined (the PubAck arrives later on a shared
reply subject, as with `publish_async`); each gets a PRODUCER span whose parent is the serving
span that committed the event, and its `traceparent` travels in the message headers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BadRequestError, NoStreamResponseError, NotFoundError
from opentelemetry import trace

from services.common import telemetry
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import nats_servers
from services.relay.adapters.publish_spans import PublishSpan, PublishSpans
from services.relay.domain.model import OutboxRow, stream_subjects, subject_for
from services.relay.service.ports import PublishOutcomes

_log = logging.getLogger(__name__)
_tracer = trace.get_tracer("memloop.relay")
_MSG_ID = api.Header.MSG_ID.value
_NO_RESPONDERS = "503"  # the status NATS answers with when no stream listens on the subject


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


async def connect_until_reachable(
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
            return await connect_nats(
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
    attempts = 8
    for attempt in range(attempts):
        try:
            info = await js.stream_info(spec.name)
        except NotFoundError:
            try:
                return await js.add_stream(spec.config())
            except BadRequestError:
                # Created concurrently with another config (a worker's); on a replicated stream
                # the group may still be forming, so the next read can say "not found": pause.
                await asyncio.sleep(0.25 * (attempt + 1))
                continue
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
    raise RuntimeError(f"could not create or update stream {spec.name} in {attempts} attempts")


class JetStreamPublisher:
    """Publisher port on nats-py's core `publish`, with the PubAcks taken on our own reply inbox.

    This is what `JetStreamContext.publish_async` does (a PUB with a reply subject; the stream
    answers there), minus what it adds per message that the relay does not need: a semaphore (the
    relay bounds its own window), a random token per reply subject (a counter is unique under an
    inbox prefix that is itself unique), a future and its callback per message, and a `PubAck`
    dataclass parsed field by field. Timeouts are one timer per batch, not one per message.
    """

    def __init__(
        self,
        client: NatsClient,
        *,
        subject_prefix: str,
        stream: str,
        publish_timeout_seconds: float,
        spans: PublishSpans | None = None,
    ) -> None:
        self._client = client
        self._spans = spans or PublishSpans.of_process()
        self._subjects: dict[str, str] = {}
        self._js = client.jetstream(timeout=publish_timeout_seconds)
        self._prefix = subject_prefix
        self._stream = stream
        self._timeout = publish_timeout_seconds
        self._inbox = ""
        self._tokens = itertools.count()
        self._pending: dict[str, _Pending] = {}

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

    async def publish(self, rows: Sequence[OutboxRow], outcomes: PublishOutcomes) -> None:
        try:
            inbox = await self._reply_inbox()
        except Exception as exc:
            for index in range(len(rows)):
                outcomes.failed(index, exc)
            return
        sent: list[str] = []
        for index, row in enumerate(rows):
            subject = self._subject(row.tenant)
            span = self._spans.start(row, subject)
            token = str(next(self._tokens))
            pending = self._pending[token] = _Pending(self._spans, outcomes, index, row.event_id, span)
            try:
                await self._client.publish(subject, row.payload, reply=inbox + token, headers=_headers(row, span))
            except Exception as exc:
                del self._pending[token]
                pending.fail(exc)
                continue
            sent.append(token)
        if sent:
            asyncio.get_running_loop().call_later(self._timeout, self._expire, sent)

    def _subject(self, tenant: str) -> str:
        """`subject_for`, remembered per tenant (a regex substitution per message otherwise)."""
        subject = self._subjects.get(tenant)
        if subject is None:
            if len(self._subjects) >= 4096:
                self._subjects.clear()
            subject = self._subjects[tenant] = subject_for(self._prefix, tenant)
        return subject

    async def _reply_inbox(self) -> str:
        """`<inbox prefix>.<nuid>.`, subscribed once with a wildcard: the connection's own inbox
        prefix, so a NATS user allowed only its own replies can take these (`nats_auth`)."""
        if not self._inbox:
            inbox = f"{self._client.new_inbox()}."
            await self._client.subscribe(f"{inbox}*", cb=self._on_reply)
            self._inbox = inbox
        return self._inbox

    async def _on_reply(self, msg: Msg) -> None:
        pending = self._pending.pop(msg.subject[len(self._inbox) :], None)
        if pending is None:  # after its timeout, or not ours
            return
        if msg.headers and msg.headers.get(api.Header.STATUS) == _NO_RESPONDERS:
            pending.fail(NoStreamResponseError())
            return
        try:
            reply = json.loads(msg.data)
            if "error" in reply:
                pending.fail(APIError.from_error(reply["error"]))
                return
            seq, duplicate = int(reply["seq"]), bool(reply.get("duplicate", False))
        except (ValueError, KeyError, TypeError) as exc:
            pending.fail(exc)
            return
        pending.ack(seq, duplicate)

    def _expire(self, tokens: list[str]) -> None:
        """The batch's publish timeout: whatever of it has no PubAck yet has failed."""
        for token in tokens:
            pending = self._pending.pop(token, None)
            if pending is not None:
                pending.fail(TimeoutError(f"no PubAck for {pending.event_id} within {self._timeout:g}s"))


class _Pending:
    """One message awaiting its PubAck: its batch's outcomes, its index there, and its span."""

    __slots__ = ("event_id", "index", "outcomes", "span", "spans")

    def __init__(
        self, spans: PublishSpans, outcomes: PublishOutcomes, index: int, event_id: str, span: PublishSpan | None
    ) -> None:
        self.spans, self.outcomes, self.index, self.event_id, self.span = spans, outcomes, index, event_id, span

    def ack(self, seq: int, duplicate: bool) -> None:
        if self.span is not None:
            self.spans.acked(self.span, seq, duplicate)
        self.outcomes.acked(self.index, seq, duplicate)

    def fail(self, error: BaseException) -> None:
        if self.span is not None:
            self.spans.failed(self.span, error)
        self.outcomes.failed(self.index, error)


def _headers(row: OutboxRow, span: PublishSpan | None) -> dict[str, str]:
    """`Nats-Msg-Id`, and the W3C `traceparent` naming the publish span (formatted directly: the
    relay has no baggage or tracestate to carry). Without a recorded span, the header names the
    serving span that committed the event."""
    headers = {_MSG_ID: row.event_id}
    if span is not None:
        headers["traceparent"] = span.traceparent
    elif len(row.trace_id) == 32:
        headers["traceparent"] = telemetry.traceparent_for(row.trace_id, row.span_id)
    return headers
