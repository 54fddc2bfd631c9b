"""The relay's publish spans, recorded as finished spans: what a processor receives, and the header."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, Sampler
from opentelemetry.trace import SpanKind, StatusCode

from services.relay.adapters.jetstream import _headers
from services.relay.adapters.publish_spans import PublishSpans
from services.relay.domain.model import OutboxRow

_TRACE, _SERVING_SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def _row(trace_id: str = _TRACE, span_id: str = _SERVING_SPAN) -> OutboxRow:
    return OutboxRow(str(uuid.uuid4()), "acme", trace_id, span_id, b"evt", datetime.now(UTC))


def _spans(sampler: Sampler | None = None) -> tuple[PublishSpans, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    return PublishSpans(TracerProvider(sampler=sampler), [SimpleSpanProcessor(exporter)]), exporter


def test_an_acked_publish_is_one_producer_span_under_the_serving_span_named_by_the_header() -> None:
    spans, exporter = _spans()
    row = _row()

    span = spans.start(row, "memloop.learning.acme")
    assert span is not None
    headers = _headers(row, span)
    assert exporter.get_finished_spans() == ()  # nothing exported while the PubAck is awaited
    spans.acked(span, 42, False)

    [finished] = exporter.get_finished_spans()
    assert finished.name == "relay.publish" and finished.kind is SpanKind.PRODUCER
    assert finished.context is not None and finished.parent is not None
    assert format(finished.context.trace_id, "032x") == _TRACE
    assert format(finished.parent.span_id, "016x") == _SERVING_SPAN and finished.parent.is_remote
    assert headers == {
        "Nats-Msg-Id": row.event_id,
        "traceparent": f"00-{_TRACE}-{finished.context.span_id:016x}-01",
    }
    assert dict(finished.attributes or {}) == {
        "messaging.system": "nats",
        "messaging.destination.name": "memloop.learning.acme",
        "memloop.event_id": row.event_id,
        "memloop.tenant": "acme",
        "messaging.nats.stream_sequence": 42,
        "memloop.duplicate": False,
    }
    assert finished.start_time is not None and finished.end_time is not None
    assert finished.start_time <= finished.end_time
    assert finished.status.status_code is StatusCode.UNSET


def test_a_failed_publish_ends_its_span_with_an_error() -> None:
    spans, exporter = _spans()
    span = spans.start(_row(), "memloop.learning.acme")
    assert span is not None

    spans.failed(span, TimeoutError("no PubAck"))

    [finished] = exporter.get_finished_spans()
    assert finished.status.status_code is StatusCode.ERROR and finished.status.description == "TimeoutError"


def test_without_a_recorded_span_the_header_names_the_serving_span() -> None:
    dropped, exporter = _spans(ALWAYS_OFF)
    row = _row()

    assert dropped.start(row, "memloop.learning.acme") is None
    assert PublishSpans(None, []).start(row, "memloop.learning.acme") is None
    assert _headers(row, None)["traceparent"] == f"00-{_TRACE}-{_SERVING_SPAN}-01"
    assert exporter.get_finished_spans() == ()


def test_ids_that_are_not_a_trace_record_no_span_and_no_traceparent() -> None:
    spans, _ = _spans()
    for row in (_row(trace_id="not-hex"), _row(trace_id="0" * 32), _row(trace_id="ab" * 8)):
        assert spans.start(row, "memloop.learning.acme") is None
    assert "traceparent" not in _headers(_row(trace_id="ab" * 8), None)
