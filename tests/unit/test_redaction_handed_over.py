"""Secrets a sentence hands over with no credential word right before the value (an eighth probe).

Of 43 chatty shapes written for this probe, 29 came through and 27 of those are now caught: a
keypad's code given by what it opens ("the alarm: 4471", "padlock 3356", "punch in 9931#", "to
disarm the alarm, type 8080"), a credential referred to after it was named ("My PIN was 1234 but
now it is 5678", "it's now Tulip!2027"), a value handed over ("Keep this safe: Orchid#2026"), a
password on the line after "new password below:", a user and a password to use or after a login
named earlier, a remote login's password, and product keys in their printed shape without a word
before them. The two left through then, "vpn alice Orchid#2026" (three bare words) and a second code
in a list ("the alarm is 2468 and the side gate 1357"), are caught since the ninth probe
(test_redaction_lists_notes_and_languages.py).

Each positive failed before (the value came through); each look-alike shares a word or a shape
with one of them (an alarm clock's time, a measurement, a locker's number, a part number, "it's
now 3 pm" after a password reset) and must come through unchanged.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD, SECRET = FindingKind.PASSWORD, FindingKind.SECRET


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # what a keypad opens, with no "code"
        ("The alarm: 4471", PASSWORD, "4471"),
        ("The key to the shed is under the mat and the padlock is 4421", PASSWORD, "4421"),
        ("The garage opens with 7731", PASSWORD, "7731"),
        ("To get into the server room, punch in 9931#", PASSWORD, "9931"),
        ("Use 4471 for the alarm", PASSWORD, "4471"),
        ("The keypad by the side entrance takes 5829.", PASSWORD, "5829"),
        ("Alarm panel: 90210#", PASSWORD, "90210"),
        ("Padlock 3356 on the gym locker.", PASSWORD, "3356"),
        ("Front door keypad 7741, then press the bell.", PASSWORD, "7741"),
        ("To disarm the alarm, type 8080 and press OFF.", PASSWORD, "8080"),
        ("The storage unit's keypad wants 3141 then the star key.", PASSWORD, "3141"),
        ("2580 disarms it, 2581 arms it again", PASSWORD, "2580"),
        # a credential named, then referred to
        ("My PIN was 1234 but now it is 5678", PASSWORD, "5678"),
        ("I changed the wifi password yesterday; it's now Tulip!2027", PASSWORD, "Tulip!2027"),
        ("I reset the alarm code. It is now 4471.", PASSWORD, "4471"),
        ("The door code changed, now it's 8812", PASSWORD, "8812"),
        ("Code's changed btw, it's 6613 now.", PASSWORD, "6613"),
        ("Passcode rotated this morning, it has been changed to 907312", PASSWORD, "907312"),
        # handed over
        ("Keep this safe: Orchid#2026", PASSWORD, "Orchid#2026"),
        ("Don't share this: Orchid#2026", PASSWORD, "Orchid#2026"),
        ("Here it is, don't lose it: Orchid#2026", PASSWORD, "Orchid#2026"),
        ("Remember this one and delete the mail: Violet$8822", PASSWORD, "Violet$8822"),
        ("For your eyes only - Quartz!9911", PASSWORD, "Quartz!9911"),
        # on the next line
        ("The wifi was reset, new password below:\n Meadow#Lark55\nThanks", PASSWORD, "Meadow#Lark55"),
        ("Your PIN is here:\n\n  448812\n", PASSWORD, "448812"),
        ("Login details below:\nbob / Hunter2!!\n", PASSWORD, "Hunter2!!"),
        # a user and a password to use, a login, a remote login
        ("for the vpn use alice / Orchid#2026", PASSWORD, "Orchid#2026"),
        ("Login for the portal \u2014 alice.b, Orchid#2026", PASSWORD, "Orchid#2026"),
        ("ssh root@10.0.0.5 with Orchid#2026", PASSWORD, "Orchid#2026"),
        ("sftp deploy@files.example using pw Bramble#31", PASSWORD, "Bramble#31"),
        # product and licence keys as printed
        ("Your licence: 4F2A-99KD-1LLQ-ZP03", SECRET, "4F2A-99KD-1LLQ-ZP03"),
        ("Activation: W269N-WFGWX-YVC9B-4J6C9-T83GX", SECRET, "W269N-WFGWX-YVC9B-4J6C9-T83GX"),
        ("Windows: NKJFK-GPHP7-G8C3J-P6JXR-HQRJR", SECRET, "NKJFK-GPHP7-G8C3J-P6JXR-HQRJR"),
        ("VK7JG-NPHTM-C97JM-9MPGT-3V66T", SECRET, "VK7JG-NPHTM-C97JM-9MPGT-3V66T"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text that hands a value over  When it is redacted  Then the value is gone, replaced by its placeholder
    assert_value_replaced(mode, text, kind, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "The alarm is set for 0630 tomorrow.",
        "My alarm: 0715",
        "The garage is 2400 mm wide and the door is 2100 mm high.",
        "Meet me at gate 12 at 14:30.",
        "The door is 1200 wide.",
        "Locker 1234 is yours for the season.",
        "Use 2024 for the budget figures.",
        "Enter 1000 on the form for the deposit.",
        "The gate opens at 0800 every day.",
        "Use 3 for the door and 4 for the window.",
        "I changed my password last week and it's now working fine.",
        "Password reset done, it's now 3 pm here.",
        "The password policy changed; it is now 12 characters minimum.",
        "It is now 2026 and the password rules are strict.",
        "The combination of factors is that it's now 4 pm.",
        "the door code is in the usual place, now it's your turn",
        "It's now Monday, the password expires Friday.",
        "Keep this safe: the passport and the tickets.",
        "Don't share this: internal roadmap for Q3.",
        "Keep it to yourself - the launch is on Monday.",
        "We use React / Vue3 for the frontend.",
        "Use utf-8 / ISO-8859-1 for legacy files.",
        "Account - Acme Corp, Q3-2026 report attached.",
        "Login for the portal - alice, then click Reports.",
        "ssh deploy@build01 with agent forwarding enabled.",
        "The key points are below:\n Growth3\n",
        "Password rules below:\nAt least 12 characters\n",
        "The password requirements are as follows:\nMin8chars\n",
        "Order ref 2026-1234-5678-9012 shipped.",
        "Run ID ABCD-1234-EFGH-5678 finished.",
        "UUID 123e4567-e89b-12d3-a456-426614174000",
        "Part BOLT-M8X1-2500-ZINC is back in stock.",
        "Reference: INC-2026-0042-ALPHA",
        "SKU AB12-CD34 and AB12-CD34-EF56.",
        "Product ID 00330-80000-00000-AA123",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then nothing is found and it comes through unchanged
    assert result.findings == ()
    assert result.text == text


def test_a_keypad_code_is_a_secret_to_policy_s_last_line() -> None:
    # Given candidates that kept a handed-over value  Then policy's last line refuses them
    assert contains_secret_pattern("remember: the padlock is 4421")
    assert contains_secret_pattern("the wifi password changed, it's now Tulip!2027")
    assert not contains_secret_pattern("the padlock is in the drawer")
