"""Bytes that do not parse as the request: never an exception out of the deserializer, the field named.

gRPC's Python server answers a raising deserializer with INTERNAL; `tolerant` must turn every parse
failure into an UndecodableRequest, and `locate` must point at the field a client can fix.
"""

from __future__ import annotations

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.gen.memloop.v1 import candidate_pb2, memory_service_pb2, policy_service_pb2
from services.common.wire_check import UndecodableRequest, locate, tolerant

_UTF8_MARK = "\u2603"  # a snowman: three bytes to swap for bytes no UTF-8 text holds


def _apply_with_texts(*texts: str) -> memory_service_pb2.ApplyLearningRequest:
    request = memory_service_pb2.ApplyLearningRequest(tenant="acme", event_id="evt-1", user="alice")
    for index, text in enumerate(texts):
        decision = request.decisions.add()
        decision.candidate.candidate_key = f"k{index}"
        decision.candidate.text = text
    return request


def _broken_utf8(message: Message) -> bytes:
    data = message.SerializeToString()
    assert data.count(_UTF8_MARK.encode()) == 1
    return data.replace(_UTF8_MARK.encode(), b"\xff\xfe\xfd")


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (
            policy_service_pb2.EvaluateRequest(context=policy_service_pb2.EvaluationContext(tenant=_UTF8_MARK)),
            "context.tenant",
        ),
        (_apply_with_texts("fine", "also fine", f"bad {_UTF8_MARK}"), "decisions[2].candidate.text"),
        (memory_service_pb2.ApplyLearningRequest(tenant="acme", user=_UTF8_MARK), "user"),
    ],
)
def test_a_string_that_is_not_utf8_is_named_by_its_path(message: Message, field: str) -> None:
    # When a request's bytes hold invalid UTF-8 in one string field
    parsed = tolerant(type(message).FromString)(_broken_utf8(message))
    # Then the deserializer returns the stand-in, naming that field's path and the UTF-8 fault
    assert isinstance(parsed, UndecodableRequest)
    assert parsed.message_name == type(message).DESCRIPTOR.full_name
    assert parsed.violation.field == field
    assert "UTF-8" in parsed.violation.description


def test_a_truncated_nested_message_names_the_message_field() -> None:
    data = _apply_with_texts("first", "second").SerializeToString()
    # When the last bytes are cut off, inside the second decision
    parsed = tolerant(memory_service_pb2.ApplyLearningRequest.FromString)(data[:-3])
    # Then the violation points at that decision (a length running past the end), not at "request"
    assert isinstance(parsed, UndecodableRequest)
    assert parsed.violation.field == "decisions[1]"
    assert "truncated" in parsed.violation.description


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        (b"\x0b", "tenant", "group"),  # field 1 as a group start: proto3 has no groups
        (b"\x0f", "tenant", "wire type 7"),
        (b"\x80\x80\x80", "request", "truncated"),  # a tag that never ends
        (b"\x00\x00", "request", "numbered 0"),
    ],
)
def test_a_malformed_frame_is_described(data: bytes, field: str, words: str) -> None:
    parsed = tolerant(memory_service_pb2.ForgetRequest.FromString)(data)
    assert isinstance(parsed, UndecodableRequest)
    assert parsed.violation.field == field and words in parsed.violation.description


def test_a_valid_message_passes_through_unchanged() -> None:
    request = _apply_with_texts("bonjour", "日本語")
    assert tolerant(memory_service_pb2.ApplyLearningRequest.FromString)(request.SerializeToString()) == request


def test_a_deserializer_that_is_not_a_generated_parser_is_left_alone() -> None:
    def custom(data: bytes) -> bytes:
        return data

    assert tolerant(custom) is custom


def test_locate_names_request_when_the_walk_finds_nothing() -> None:
    # Bytes protobuf might refuse for a reason the walk does not model still get a field: the request
    violation = locate(candidate_pb2.Candidate.DESCRIPTOR, b"", ValueError("odd"))
    assert violation.field == "request" and "memloop.v1.Candidate" in violation.description


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=256))
def test_any_bytes_give_a_message_or_a_named_refusal_never_an_exception(data: bytes) -> None:
    # For any bytes at all, the deserializer returns; a refusal names "request" or a path rooted in a field
    parsed = tolerant(memory_service_pb2.ApplyLearningRequest.FromString)(data)
    if isinstance(parsed, UndecodableRequest):
        root = parsed.violation.field.split(".")[0].split("[")[0]
        fields = set(memory_service_pb2.ApplyLearningRequest.DESCRIPTOR.fields_by_name)
        assert root == "request" or root in fields or root.startswith("<field ")
    else:
        assert isinstance(parsed, memory_service_pb2.ApplyLearningRequest)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=20), min_size=1, max_size=4), st.data())
def test_a_cut_anywhere_in_a_valid_message_never_escapes(texts: list[str], data: st.DataObject) -> None:
    encoded = _apply_with_texts(*texts).SerializeToString()
    cut = data.draw(st.integers(min_value=0, max_value=len(encoded)))
    parsed = tolerant(memory_service_pb2.ApplyLearningRequest.FromString)(encoded[:cut])
    assert isinstance(parsed, (UndecodableRequest, memory_service_pb2.ApplyLearningRequest))
