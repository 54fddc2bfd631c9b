"""Span export is off the request path (issue 15): ending a span only queues it; the span file gets
it on the exporter's thread, on `flush`, and at shutdown, so no span is lost when a service stops."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from services.common import telemetry
from services.common.auth import TokenVerifier
from services.common.auth_keys import SigningKey
from services.common.settings import CommonSettings

LONG = 600_000  # ms: the exporter's own schedule never fires within a test


def _settings(span_file: Path) -> CommonSettings:
    return CommonSettings(
        service_name="telemetry-test",
        grpc_host="127.0.0.1",
        grpc_port=0,
        metrics_port=0,
        auth=TokenVerifier(SigningKey.generate().public_key_set()),
        log_level="INFO",
        otlp_endpoint="",
        span_file=str(span_file),
        drain_seconds=0.1,
    )


def _names(span_file: Path) -> list[str]:
    if not span_file.exists():
        return []
    return [json.loads(line)["name"] for line in span_file.read_text().splitlines() if line.strip()]


def test_ending_a_span_does_not_write_the_file_and_shutdown_writes_every_queued_span(tmp_path: Path) -> None:
    # Given a provider whose export schedule is far away
    span_file = tmp_path / "spans.jsonl"
    provider = telemetry.make_provider(_settings(span_file), span_file_delay_ms=LONG)
    tracer = provider.get_tracer("test")

    # When spans end on the calling thread
    for name in ("first", "second", "third"):
        with tracer.start_as_current_span(name, attributes={"memloop.event_id": name}):
            pass

    # Then the calling thread wrote nothing (the append is not on its path)
    assert _names(span_file) == []

    # And shutting down writes them all, in order, with their attributes
    provider.shutdown()
    assert _names(span_file) == ["first", "second", "third"]
    lines = [json.loads(line) for line in span_file.read_text().splitlines()]
    assert [line["attributes"]["memloop.event_id"] for line in lines] == ["first", "second", "third"]
    assert all(line["service"] == "memloop-telemetry-test" for line in lines)


def test_force_flush_makes_the_spans_readable_at_once(tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    provider = telemetry.make_provider(_settings(span_file), span_file_delay_ms=LONG)
    with provider.get_tracer("test").start_as_current_span("read-me"):
        pass
    assert _names(span_file) == []
    try:
        # When a reader asks for a flush, then the span is in the file
        assert provider.force_flush(5000)
        assert _names(span_file) == ["read-me"]
    finally:
        provider.shutdown()


def test_without_a_flush_a_span_reaches_the_file_within_the_exporter_delay(tmp_path: Path) -> None:
    span_file = tmp_path / "spans.jsonl"
    provider = telemetry.make_provider(_settings(span_file))
    try:
        with provider.get_tracer("test").start_as_current_span("scheduled"):
            pass
        deadline = time.monotonic() + 10
        while _names(span_file) != ["scheduled"]:
            assert time.monotonic() < deadline, "the exporter never wrote the span"
            time.sleep(0.02)
    finally:
        provider.shutdown()


def test_no_span_file_means_no_file_exporter(tmp_path: Path) -> None:
    provider = telemetry.make_provider(replace(_settings(tmp_path / "unused.jsonl"), span_file=""))
    with provider.get_tracer("test").start_as_current_span("nowhere"):
        pass
    provider.shutdown()
    assert list(tmp_path.iterdir()) == []
