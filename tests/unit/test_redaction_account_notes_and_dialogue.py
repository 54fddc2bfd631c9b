"""Passwords kept beside an account's name, asked for and answered, or under a lock's emoji (a twelfth probe).

Written before the code: 35 ways to write one password down, most with no credential word. On
`74343d3` 15 came through redaction: a note of one's logins that names only the service ("bank:
Kestrel77", "Kestrel77 for gmail", "the bank one is Kestrel77", "I used Kestrel77 on the bank
site", "Portal -> alice.w / Kestrel77", "the portal wants alice.w + Kestrel77"), a question and
its answer on the next line ("Bob: what's the wifi pw?\\nAlice: Hunter2", "Q: …login…?\\nA: alice /
X"), a lock's emoji as the label, "U/P alice.w X", "In case I forget: X (portal)". 13 are caught
now. A second round of 21 (one password in every place a note of logins puts it) had 9 through
on `fe94d87`; 7 are caught ("netflix X / spotify Y", "My Netflix login (…) uses X", "X = netflix",
"can you log into my Netflix? It's X", Korean "비번", "it's hunter2 all lowercase"), not "padlock:
74 19 33" nor "psst... hunter2". Still through from the first: "It's Kestrel77 for the portal,
alice.w for the user" (the value opens the sentence after "It's", which starts every other remark)
and "bank app 4417" (four digits after a service's name are as often a branch or a year).

A service's name is a word of every other note, so a value beside it must look like what a
password rule asks for and end its clause, and must not name an order, a ticket, a product's
version or code; 120,000 paragraphs of ordinary text redact exactly as before.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD = FindingKind.PASSWORD


@MODES
@pytest.mark.parametrize(
    ("text", "value"),
    [
        # an account's name as the only label
        ("bank: Kestrel77", "Kestrel77"),
        ("Netflix = Kestrel77 (shared with mum)", "Kestrel77"),
        ("the bank one is Kestrel77.", "Kestrel77"),
        ("Portal -> alice.w / Kestrel77", "Kestrel77"),
        ("The portal wants alice.w + Kestrel77", "Kestrel77"),
        ("PayPal \u2014 Otter!Bay9", "Otter!Bay9"),
        # the value before the account it is used for
        ("Kestrel77 for gmail", "Kestrel77"),
        ("I used Kestrel77 on the bank site", "Kestrel77"),
        ("Kestrel77 is what I use on Amazon", "Kestrel77"),
        # asked and answered, on the next line after a speaker's name
        ("Bob: what's the wifi pw?\nAlice: Hunter2", "Hunter2"),
        ("Q: What's the login for the shared account?\nA: alice / Kestrel77!", "Kestrel77!"),
        # a lock's emoji, both parts named at once, a note to oneself with a remark
        ("\U0001f510 Kestrel77", "Kestrel77"),
        ("\U0001f512 wifi \u2192 Kestrel77", "Kestrel77"),
        ("U/P alice.w Kestrel77", "Kestrel77"),
        ("In case I forget: Kestrel77 (portal)", "Kestrel77"),
        # one password kept for everything, shaped as a rule asks (the last stop's "still through")
        ("I always use Sunshine88 for everything, so try that first.", "Sunshine88"),
        # a second round (21 shapes, 9 through on fe94d87)
        ("logins.txt: netflix Mango!Tree22 / spotify Berry#Bush33", "Mango!Tree22"),
        ("logins.txt: netflix Mango!Tree22 / spotify Berry#Bush33", "Berry#Bush33"),
        ("My Netflix login (alice@example.com) uses Mango!Tree22", "Mango!Tree22"),
        ("Mango!Tree22 = netflix", "Mango!Tree22"),
        ("Hey, can you log into my Netflix? It's Mango!Tree22", "Mango!Tree22"),
        ("For the Netflix account use Mango!Tree22", "Mango!Tree22"),
        ("넷플릭스 비번 Mango!Tree22", "Mango!Tree22"),
        ("it's hunter2 all lowercase", "hunter2"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, value: str) -> None:
    assert_value_replaced(mode, text, PASSWORD, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "Amazon: Order#4411 shipped",
        "we use Office365 for email",
        "I installed Windows11 on my laptop",
        "Spotify: Premium2024 plan renewed",
        "Reported by Thomas1664 on GitHub",
        "Thomas1664 on github (31 Jan 2023)",
        "$mail = Mail::Internet->new(\\@mail);",
        "cipher/mac-poly1305.c (poly1305mac_ops): the same.",
        "Slack: #General-2024 channel",
        "Jira: PROJ-1234 is blocked",
        "GitHub: Build#2201 failed",
        "the bank is Barclays",
        "Forgot your login? Reset it from the portal",
        "I use Python3 for everything",
        "I use Office365 for everything",
        "we use Windows11 for everything",
        "Netflix Premium2024 plan renewed",
        "on a typical iOS device (iPhone 4S, Cortex-A9) and by",
        "Names are case-sensitive",
        "Python3 is case-sensitive",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    assert Redactor(mode).redact(text).text == text
