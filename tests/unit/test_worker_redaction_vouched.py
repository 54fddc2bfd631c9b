"""The worker skips its second redaction pass exactly when serving vouches, with the same redactor's
fingerprint, that the event's summaries and content are already clean; otherwise it redacts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.redaction import RedactionMode, RedactionResult, Redactor
from services.serving.adapters.event_codec import encode_event
from services.serving.domain.model import Email, HandleRequestCommand, ToolOutcome
from services.serving.service.use_cases import prepare_result
from services.worker.entrypoints.messages import parse_learning_event
from services.worker.service.model import EmailView, LearningEventView
from services.worker.service.process_event import redacted_input
from tests.fixtures import load_fixture

PHONE = "+1 415 555 0134"
RAW = EmailView("alice", "bob@partner.example", "alice@acme.example", "Sync", f"Call me on {PHONE}.", False)


class CountingRedactor(Redactor):
    def __init__(self) -> None:
        super().__init__(RedactionMode.THOROUGH)
        self.calls = 0

    def redact(self, text: str) -> RedactionResult:
        self.calls += 1
        return super().redact(text)


def _event(redacted_by: str) -> LearningEventView:
    return LearningEventView(
        event_id="evt-1",
        trace_id="ab" * 16,
        request_id="req-1",
        tenant="acme",
        user="alice",
        thread="",
        route="",
        content_ref="cnt-1",
        owner_address="alice@acme.example",
        redacted_by=redacted_by,
    )


def test_vouched_content_is_read_as_is_without_a_second_pass() -> None:
    redactor = CountingRedactor()
    clean = replace(RAW, body=redactor.redact(RAW.body).text)
    redactor.calls = 0
    read = redacted_input(_event(redactor.fingerprint), clean, redactor)
    assert redactor.calls == 0
    assert read.email is not None
    assert read.email.body == clean.body and PHONE not in read.email.body


@pytest.mark.parametrize("redacted_by", ["", "thorough-US-0123456789abcdef0123456789abcdef", "fast-US-x"])
def test_content_without_this_redactors_fingerprint_is_redacted_here(redacted_by: str) -> None:
    redactor = CountingRedactor()
    read = redacted_input(_event(redacted_by), RAW, redactor)
    assert redactor.calls >= 4  # every mail field
    assert read.email is not None
    assert PHONE not in read.email.body and "[PHONE]" in read.email.body


def test_fingerprints_differ_by_mode_and_region_and_agree_between_instances() -> None:
    thorough = Redactor(RedactionMode.THOROUGH).fingerprint
    assert thorough == Redactor(RedactionMode.THOROUGH).fingerprint
    assert thorough != Redactor(RedactionMode.FAST).fingerprint
    assert thorough != Redactor(RedactionMode.THOROUGH, default_region="GB").fingerprint


def test_serving_writes_its_redactors_fingerprint_into_the_event_and_the_worker_reads_it() -> None:
    redactor = Redactor(RedactionMode.THOROUGH)
    fixture = load_fixture("alice.json")
    request = fixture["requests"][0]
    command = HandleRequestCommand(
        request_id="req-1",
        tenant="acme",
        user="alice",
        thread="",
        route="",
        procedure_versions={},
        tool_outcomes=(ToolOutcome(tool="calendar.create_event", status="ok", ref="", summary=f"call {PHONE}"),),
        feedback_ref="",
        content=Email(request["content"]["from"], request["content"]["to"], "Sync", request["content"]["body"]),
        attachments=(),
        reply="",
        owner_address="",
    )
    new = prepare_result(
        command, lambda t: redactor.redact(t).text, datetime.now(UTC), redacted_by=redactor.fingerprint
    )
    payload = encode_event(new.event)
    assert learning_event_pb2.LearningEvent.FromString(payload).redacted_by == redactor.fingerprint
    assert parse_learning_event(payload).redacted_by == redactor.fingerprint
    # and what it vouches for is clean: a second pass changes nothing (redaction is idempotent)
    texts = [new.content.email.subject, new.content.email.body, *(o.summary for o in new.event.tool_outcomes)]
    assert all(redactor.redact(text).text == text for text in texts)
    assert PHONE not in new.event.tool_outcomes[0].summary
