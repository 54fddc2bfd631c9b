"""Credentials in pasted tables and in the looser forms a third held-out probe found (10 of 50 came through).

A table states its passwords once, in the header; each row's value sits under it with no link.
The other shapes: a PIN read out digit by digit, a code named by what it disarms, a phone's
unlock pattern, a value after a spaced dash, an employer id. Each look-alike must stay unchanged.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "values"),
    [
        (
            "| Username | Password |\n|---|---|\n| alice | Table$Pw22 |\n| bob | Second#Row7 |",
            FindingKind.PASSWORD,
            ["Table$Pw22", "Second#Row7"],
        ),
        ("username,password\nalice,Csv$Pass33\nbob,Other!Pass4", FindingKind.PASSWORD, ["Csv$Pass33", "Other!Pass4"]),
        ("Service\tUser\tPassword\nnas\tadmin\tGr4nite!\nrouter\troot\tT0or$88", FindingKind.PASSWORD, ["Gr4nite!"]),
        ("name;pin;note\nBob;4471;front door\nAmy;9921;back", FindingKind.PASSWORD, ["4471", "9921"]),
        ("id,api_key,expires\n1,9f8e7d6c5b4a39281706f5e4d3c2b1a0,2026-01-01", FindingKind.SECRET, ["9f8e7d6c5b4a3928"]),
        ("The PIN for my card is 4 4 7 1", FindingKind.PASSWORD, ["4 4 7 1"]),
        ("Here's the code to disarm: 9911", FindingKind.PASSWORD, ["9911"]),
        ("Phone unlock pattern: 1-5-9-6-3", FindingKind.SECRET, ["1-5-9-6-3"]),
        ("the new password you asked for -- Copper!Kettle9", FindingKind.PASSWORD, ["Copper!Kettle9"]),
        ("Tax ID (EIN): 12-3456789", FindingKind.GOV_ID, ["12-3456789"]),
    ],
)
def test_the_values_are_replaced_by_their_kind(
    mode: RedactionMode, text: str, kind: FindingKind, values: list[str]
) -> None:
    # Given a table column or a form stating credentials  When redacted
    result = Redactor(mode).redact(text)
    # Then every value is gone and the kind's placeholder stands in for it
    assert all(value not in result.text for value in values)
    assert kind in result.kinds


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "| Field | Password policy |\n|---|---|\n| length | 14 |",
        "| Step | Action |\n|---|---|\n| 1 | Reset your password |\n| 2 | Log in |",
        "Hi Bob, reset your password, then log in.\nThanks, Alice",
        "name,password_changed,last_login\nbob,yes,2026-01-01",
        "Feature | Status\nPassword reset | done\nSSO | pending",
        "pin,label\n,blank\n,blank2",
        "The pattern library is on the wiki.",
        "A knitting pattern: 3 rows of 12.",
        "unlock the door at 9 -- the guard arrives at 10",
        "We arm the alarm at 22:00.",
        "the PIN is printed on page 4 4 of the manual",
        "our password rules -- see the wiki",
        "The EIN field is optional.",
    ],
)
def test_tables_and_prose_that_only_look_like_it_stay(mode: RedactionMode, text: str) -> None:
    # Given a table about passwords, or prose sharing a word with the forms above  When redacted
    # Then it comes through unchanged
    assert Redactor(mode).redact(text).text == text
