"""Credentials said in passing: a login's parts joined by "and", a dial's turns, a PIN set off by commas,
a quoted recovery question (the eleventh probe's third round).

Written before the code: 24 chatty shapes. 11 came through: "my bank login is my email and
Tulip2027", "Login to the NAS with admin and Qwerty!23", "mother's maiden: Kowalski", "The answer to
'favourite teacher' is Mrs Lowe", "his banking PIN, 4 4 2 1, is written on a post-it", "the
router's admin password hasn't changed: still Netgear-4421", "Locker combination: left 12, right 34,
left 56", "ATM: 9034", "keycode for the office: 7782", "Sorry, typo, it's Hunter3 not Hunter2" and
"I always use Sunshine88 for everything". The first nine are now caught, with neighbours ("I use
Kestrel77 for all my accounts"). Still through: the correction with no credential named, and a
password kept "for everything" without a password's symbol ("I use Python3 for everything" names a
tool). The look-alikes include the ordinary texts an earlier draft of these readings caught: X11's
"keycode 0", "the password hashing algorithm is now Argon2id", a list of fields after
"formatted_passphrase".
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("my bank login is my email and Tulip2027", "Tulip2027"),
        ("Login to the NAS with admin and Qwerty!23", "Qwerty!23"),
        ("I use Kestrel77 for all my accounts", "Kestrel77"),
        ("I use Tulip!27 for everything", "Tulip!27"),
        ("mother's maiden: Kowalski", "Kowalski"),
        ("My mother's maiden name is Tanaka", "Tanaka"),
        ("The answer to 'favourite teacher' is Mrs Lowe", "Mrs Lowe"),
        ('the answer to "where did you grow up" is Leeds.', "Leeds"),
        ("his banking PIN, 4 4 2 1, is written on a post-it", "4 4 2 1"),
        ("the router's admin password hasn't changed: still Netgear-4421", "Netgear-4421"),
        ("Locker combination: left 12, right 34, left 56", "left 12, right 34, left 56"),
        ("ATM: 9034", "9034"),
        ("keycode for the office: 7782", "7782"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, value: str) -> None:
    # Given a credential said in passing  When redacted  Then it is gone and a password's placeholder stands
    assert_value_replaced(mode, text, FindingKind.PASSWORD, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "I use Python3 for everything",
        "We use Office365 for all our mail",
        "I use Jira8 for all my projects",
        "use @samp{-s} for everything",
        "Log in to Jira with SSO and then open the board",
        "Connect to the VPN using Okta and your badge",
        "The login is slow and it's 2024 already",
        "Our maiden voyage: Lisbon",
        "The answer to 'what is the deadline' is Friday",
        "The PIN, 2024 edition, is out",
        "The password, as you know, is required.",
        "The password, v2, is weak",
        "The combination of left 12 items",
        "The ATM is 200 m away",
        "ATM fee: 2500",
        "ATM 3 is broken",
        "keycode 0 events are ignored",
        "the keycode is less than min-keycode",
        "print n_pins, cross_timestamping, adjust_phase",
        "The default password hashing algorithm is now Argon2id.",
        "Add fields formatted_passphrase, formatted_passphrase_label, formatted_passphrase_tt",
        "Thanks to immspw, jbridge99, danliew",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When redacted  Then nothing is found
    assert Redactor(mode).redact(text).findings == ()
