"""The relay's `relay.publish` span per message, recorded as a finished span once its PubAck is in.

Why not `tracer.start_span` per message: a live SDK span (the sampler's context lookups, bounded
attribute and event containers with a lock each, the processors' `on_start`, `end`) cost 30-60 µs
per message in the relay's profile, more than nats-py's whole publish, on a path taken thousands of
times a second. The relay needs nothing a live span gives: it never makes the span current, nothing
nests under it, and its start, end, attributes and outcome are all known when the PubAck (or the
failure) arrives. So while the message is in flight its span is a few numbers (`PublishSpan`), and
at the end it goes to the tracer provider's span processors as a `ReadableSpan`: the object a live
span hands them when it ends, with the same ids, parent, kind, attributes, status and times, after
the provider's sampler has decided on it as it would for a live span.

Which is why the trace still reads the same: the span's parent is the serving span that committed
the event (ids from the outbox row), and the message's `traceparent` names this span.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import Decision, Sampler
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from services.common import telemetry
from services.relay.domain.model import OutboxRow

SPAN_NAME = "relay.publish"
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_OK = Status(StatusCode.UNSET)
_SCOPE = InstrumentationScope("memloop.relay")


class PublishSpan:
    """One message's publish span while its PubAck is awaited."""

    __slots__ = ("attributes", "context", "parent", "start_ns")

    def __init__(
        self, context: SpanContext, parent: SpanContext, start_ns: int, attributes: dict[str, AttributeValue]
    ) -> None:
        self.context, self.parent, self.start_ns, self.attributes = context, parent, start_ns, attributes

    @property
    def traceparent(self) -> str:
        """The W3C header naming this span (what the tracecontext propagator would write)."""
        return f"00-{self.context.trace_id:032x}-{self.context.span_id:016x}-01"


class PublishSpans:
    """Starts and ends `relay.publish` spans for one tracer provider and its span processors."""

    def __init__(self, provider: TracerProvider | None, processors: Sequence[SpanProcessor]) -> None:
        self._processors = tuple(processors)
        self._sampler: Sampler | None = provider.sampler if provider is not None else None
        self._ids: IdGenerator | None = provider.id_generator if provider is not None else None
        self._resource = provider.resource if provider is not None else Resource.get_empty()

    @classmethod
    def of_process(cls) -> PublishSpans:
        """The process's tracer provider and the processors `telemetry.configure` gave it; no spans
        at all when no SDK provider is installed (then the header names the serving span)."""
        provider = trace.get_tracer_provider()
        return cls(provider if isinstance(provider, TracerProvider) else None, telemetry.span_processors())

    def start(self, row: OutboxRow, subject: str) -> PublishSpan | None:
        """The span of `row`'s publish from now, or None when none is recorded (no SDK provider, ids
        that are not a trace's, or the sampler drops it)."""
        if self._sampler is None or self._ids is None:
            return None
        try:
            trace_id = int(row.trace_id, 16)
            span_id = int(row.span_id, 16) if row.span_id else 1
        except ValueError:
            return None
        if len(row.trace_id) != 32 or not trace_id or not span_id:
            return None
        parent = SpanContext(trace_id, span_id, is_remote=True, trace_flags=_SAMPLED)
        decision = self._sampler.should_sample(
            trace.set_span_in_context(NonRecordingSpan(parent)), trace_id, SPAN_NAME, SpanKind.PRODUCER
        )
        if decision.decision is not Decision.RECORD_AND_SAMPLE:  # what is_sampled() says, typed
            return None
        attributes: dict[str, AttributeValue] = dict(decision.attributes or {})
        attributes["messaging.system"] = "nats"
        attributes["messaging.destination.name"] = subject
        attributes["memloop.event_id"] = row.event_id
        attributes["memloop.tenant"] = row.tenant
        context = SpanContext(trace_id, self._ids.generate_span_id(), is_remote=False, trace_flags=_SAMPLED)
        return PublishSpan(context, parent, time.time_ns(), attributes)

    def acked(self, span: PublishSpan, stream_seq: int, duplicate: bool) -> None:
        span.attributes["messaging.nats.stream_sequence"] = stream_seq
        span.attributes["memloop.duplicate"] = duplicate
        self._end(span, _OK)

    def failed(self, span: PublishSpan, error: BaseException) -> None:
        self._end(span, Status(StatusCode.ERROR, type(error).__name__))

    def _end(self, span: PublishSpan, status: Status) -> None:
        finished = ReadableSpan(
            SPAN_NAME,
            context=span.context,
            parent=span.parent,
            resource=self._resource,
            attributes=span.attributes,
            kind=SpanKind.PRODUCER,
            status=status,
            start_time=span.start_ns,
            end_time=time.time_ns(),
            instrumentation_scope=_SCOPE,
        )
        for processor in self._processors:
            processor.on_end(finished)
