"""HandleRequest's input limits: every violation named the way the proto spells the field."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.common.context_version import CONTEXT_VERSION_KEY, context_version
from services.common.errors import InvalidArgument
from services.serving.domain.model import Attachment, Email, HandleRequestCommand, ToolOutcome
from services.serving.domain.validation import (
    ATTACHMENTS_MAX_TOTAL_BYTES,
    BODY_MAX_BYTES,
    TOOL_OUTCOMES_MAX,
    is_positive_version,
    validate_handle_request,
)


def _command(**changes: object) -> HandleRequestCommand:
    base = HandleRequestCommand(
        request_id="req-alice-0001",
        tenant="acme",
        user="alice",
        thread="thr-bob-sync",
        route="calendar.schedule",
        procedure_versions={"schedule_meeting": "3", "reply_style": "7"},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-evt-7781", "Sync with Bob"),),
        feedback_ref="",
        content=Email("bob.tan@partner.example", "alice@acme.example", "Quick sync?", "Hi Alice"),
        attachments=(),
        reply="Booked.",
        owner_address="alice@acme.example",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def _fields(command: HandleRequestCommand) -> list[str]:
    with pytest.raises(InvalidArgument) as failure:
        validate_handle_request(command)
    return [v.field for v in failure.value.violations]


def test_a_valid_command_passes_unchanged() -> None:
    command = _command()
    assert validate_handle_request(command) is command


@pytest.mark.parametrize("field", ["request_id", "tenant", "user", "thread", "route"])
def test_each_required_identifier_is_named_when_missing_or_blank(field: str) -> None:
    assert _fields(_command(**{field: ""})) == [field]
    assert _fields(_command(**{field: "   "})) == [field]


def test_identifiers_are_limited_to_256_characters() -> None:
    assert _fields(_command(thread="t" * 257)) == ["thread"]


@pytest.mark.parametrize("version", ["0", "-1", "+3", "03", "1.5", "seven", "", " 3", "2147483648"])
def test_procedure_versions_must_be_positive_integers(version: str) -> None:
    assert _fields(_command(procedure_versions={"reply_style": version})) == ["procedure_versions[reply_style]"]


@pytest.mark.parametrize("version", ["1", "7", "42", "2147483647"])
def test_positive_versions_are_accepted(version: str) -> None:
    assert is_positive_version(version)


def test_the_context_version_from_get_context_is_accepted_under_its_reserved_name() -> None:
    # Given the version GetContext would return for what it showed
    version = context_version(["mem-1", "mem-2"], [("reply_style", 7)])
    # Then serving takes it back next to the procedure versions, and nothing else under that name
    assert validate_handle_request(_command(procedure_versions={CONTEXT_VERSION_KEY: version, "reply_style": "7"}))
    for bad in ("7", "", version.upper(), version + "0", "x" * 32):
        assert _fields(_command(procedure_versions={CONTEXT_VERSION_KEY: bad})) == [
            f"procedure_versions[{CONTEXT_VERSION_KEY}]"
        ]


def test_content_body_is_limited_to_256_kib_in_utf8_bytes() -> None:
    assert validate_handle_request(_command(content=Email(body="x" * BODY_MAX_BYTES)))
    assert _fields(_command(content=Email(body="x" * (BODY_MAX_BYTES + 1)))) == ["content.body"]
    assert _fields(_command(content=Email(body="é" * (BODY_MAX_BYTES // 2 + 1)))) == ["content.body"]


def test_attachments_are_limited_to_10_mib_together() -> None:
    half = b"\0" * (ATTACHMENTS_MAX_TOTAL_BYTES // 2)
    assert validate_handle_request(_command(attachments=(Attachment("a", "x/y", half), Attachment("b", "x/y", half))))
    too_big = (Attachment("a", "x/y", half), Attachment("b", "x/y", half + b"\0"))
    assert _fields(_command(attachments=too_big)) == ["content.attachments"]


def test_tool_outcomes_are_limited_and_each_needs_tool_and_status() -> None:
    many = tuple(ToolOutcome("t", "ok") for _ in range(TOOL_OUTCOMES_MAX + 1))
    assert _fields(_command(tool_outcomes=many)) == ["tool_outcomes"]
    assert _fields(_command(tool_outcomes=(ToolOutcome("", "ok"), ToolOutcome("t", "")))) == [
        "tool_outcomes[0].tool",
        "tool_outcomes[1].status",
    ]


def test_every_violation_is_reported_at_once() -> None:
    assert _fields(_command(tenant="", user="", procedure_versions={"x": "0"})) == [
        "tenant",
        "user",
        "procedure_versions[x]",
    ]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"thread": "password=Quokka#2031"}, "thread"),
        ({"feedback_ref": "https://bob:Hunter2x@feedback.example/f/1"}, "feedback_ref"),
        ({"route": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}, "route"),
        (
            {
                "tool_outcomes": (
                    ToolOutcome("web.fetch", "ok", "https://x.example/cb?token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"),
                )
            },
            "tool_outcomes[0].ref",
        ),
        ({"tool_outcomes": (ToolOutcome("AKIAIOSFODNN7EXAMPLE", "ok", "", ""),)}, "tool_outcomes[0].tool"),
        ({"request_id": "req api_key: 9f8e7d6c5b4a3f2e1d0c"}, "request_id"),
        ({"thread": "alice@example.com:Hunter2!!"}, "thread"),
    ],
)
def test_an_identifier_kept_as_sent_may_not_hold_a_credential(changes: dict[str, object], field: str) -> None:
    # Given a credential in a field serving stores and forwards verbatim  When validated
    with pytest.raises(InvalidArgument) as failure:
        validate_handle_request(_command(**changes))
    # Then the field is named, and the message does not echo the secret
    assert [v.field for v in failure.value.violations] == [field]
    assert "credential" in failure.value.violations[0].description
    assert all(str(value)[-6:] not in str(failure.value) for value in changes.values() if isinstance(value, str))


@pytest.mark.parametrize(
    "ref",
    [
        "note-8f14e45fceea167a5a36dedd4bea2543",
        "evt_01HF3K9Q2Z7X8Y6W5V4U3T2S1R",
        "msg:<CAFx9=abc@mail.example>",
        "msg:alice@example.com:a1b2c3d4e5",  # an address and a token: an id, unless the token has a password's symbol
    ],
)
def test_random_looking_ids_are_still_identifiers(ref: str) -> None:
    # Given a tool reference that only looks random (an id, not a stated secret)  Then it is accepted
    command = _command(tool_outcomes=(ToolOutcome("notes.save", "ok", ref, "Saved"),))
    assert validate_handle_request(command) is command
