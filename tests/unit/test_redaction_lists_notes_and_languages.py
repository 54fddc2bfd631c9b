"""Secrets in password lists, notes to self, other languages and plain words (a ninth probe).

Written before the code: 139 chatty and multilingual shapes. 38 came through, 32 whole and 6 in part
(the address of "Spotify alice@example.com Sunshine1" went, its password stayed). 29 are now caught:
a door's code in the languages the redactor reads ("Kod do domofonu: 4821", "código de la puerta",
"le code d'entrée est", "Der Code für die Haustür ist") and glued into one word ("Türcode",
"deurcode", "digicode"); a passphrase of plain words after a password word ("pass: correct horse
battery staple"); a second keypad code in a list; a value noted for oneself ("Remember: Gr33nT3a!");
a password list's "service address password" line with spaces only; a network's name then its key;
a service, a user and a password as three bare words; a security answer written as a name after
"is"; Japan's "My Number" without "card"; the last four of "my social"; and "p/w".

A short round on personal data (37 shapes) found three more, caught too: a phone number its label
names in a format the default region does not read ("Mi teléfono es 612 345 678"), the first half
of "alice dot smith at gmail dot com", and "</p" taken into a value before a closing tag (the
markup broke: "API key: [SECRET]>").

Still through, and why: a password referred to with no credential word at all ("I use the same one
as my email, Kestrel77"), a code read out after "the code is" ("one two three four"), a hint that
spells the password out ("the dog's name, Rex, followed by 2019"), and a combination with hyphens
after "the vault opens with".
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD, SECRET, GOV_ID = FindingKind.PASSWORD, FindingKind.SECRET, FindingKind.GOV_ID
PHONE = FindingKind.PHONE


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # a door's code in other languages, and glued to what it opens
        ("Kod do domofonu: 4821", PASSWORD, "4821"),
        ("código de la puerta: 4821", PASSWORD, "4821"),
        ("el código del portal es 4821", PASSWORD, "4821"),
        ("le code d'entrée est 4821", PASSWORD, "4821"),
        ("codice del cancello: 4821", PASSWORD, "4821"),
        ("il codice del portone è 4821", PASSWORD, "4821"),
        ("código do portão: 4821", PASSWORD, "4821"),
        ("Der Code für die Haustür ist 4821", PASSWORD, "4821"),
        ("de code van de deur is 4821", PASSWORD, "4821"),
        ("Türcode: 4821", PASSWORD, "4821"),
        ("deurcode: 4821", PASSWORD, "4821"),
        ("digicode : 4821", PASSWORD, "4821"),
        ("Schlüssel für die API: J8HP2EebgEXEWIIlSiowZ6gAOrS7eAHTVWgo", SECRET, "J8HP2EebgEXEWIIl"),
        # a passphrase of plain words
        ("pass: correct horse battery staple", PASSWORD, "horse battery staple"),
        ("Password: correct horse battery staple", PASSWORD, "horse battery staple"),
        ("my wifi password is purple monkey dishwasher", PASSWORD, "monkey dishwasher"),
        ("The password is Correct Horse Battery Staple.", PASSWORD, "Horse Battery"),
        ("pw = tiger lamp orbit velvet", PASSWORD, "orbit velvet"),
        # the second code in a list
        ("the alarm is 2468 and the side gate 1357", PASSWORD, "1357"),
        ("Front door 1122, back door 3344.", PASSWORD, "3344"),
        ("The padlock is 4421; the garage 7789", PASSWORD, "7789"),
        # noted for oneself
        ("Remember: Gr33nT3a!", PASSWORD, "Gr33nT3a!"),
        ("Note to self \u2014 bank: Ferret!Run42", PASSWORD, "Ferret!Run42"),
        ("Reminder - router: Mesh#Node77\nBuy milk", PASSWORD, "Mesh#Node77"),
        # a password list, a network, three bare words
        ("Spotify alice@example.com Sunshine1", PASSWORD, "Sunshine1"),
        ("Disney+ bob.smith@gmail.com Tangerine77!\nNetflix see above", PASSWORD, "Tangerine77!"),
        ("SSID HomeNet key Lighthouse88", PASSWORD, "Lighthouse88"),
        ('wifi "Cafe5G", psk espresso2024', PASSWORD, "espresso2024"),
        ("vpn alice Orchid#2026", PASSWORD, "Orchid#2026"),
        ("router admin Xk9!mesh", PASSWORD, "Xk9!mesh"),
        ("Here are my details - jsmith, Fall2025", PASSWORD, "Fall2025"),
        # a security answer, an id, a shorthand
        ("the answer to my security question is Rex", PASSWORD, "Rex"),
        ("My Number is 1234 5678 9012", GOV_ID, "5678"),
        ("my number: 123456789012 (for the tax office)", GOV_ID, "123456789012"),
        ("p/w Marzipan_88", PASSWORD, "Marzipan_88"),
        ("last four of my social are 6789", GOV_ID, "6789"),
        # a phone number its label names, in a format the default region does not read
        ("Mi teléfono es 612 345 678", PHONE, "345 678"),
        ("My phone number is 612 345 678", PHONE, "345 678"),
        ("fax 612 345 678", PHONE, "345 678"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text stating a secret in one of the probe's shapes  When redacted  Then its placeholder replaces it
    assert_value_replaced(mode, text, kind, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        # sentences about a password, not a passphrase
        "Password: sent to you by SMS",
        "Password: must be changed every ninety days",
        "The password is taped under the router",
        "Password: same as the wifi one",
        "The password is required for all staff accounts.",
        "Your password is about to expire",
        "Password: see attached note",
        "the password was reset by the helpdesk",
        "Password policy: minimum twelve characters",
        # reminders and notes without a password
        "Remember: the meeting moved to Thursday",
        "Reminder: Q3-2026 planning",
        "Remember: COVID-19 rules still apply",
        "Note to self: call Bob at 10",
        # doors, gates and codes that are not a keypad's
        "Front door 12, back door 3",
        "the front door faces north and the gate 1900 mm wide",
        "the gate 42 boarding starts at 1130",
        "Code de conduite: 2024",
        "le code postal est 75011",
        "the code for the report is in the repo",
        "code of practice 2021",
        # addresses, networks and services followed by ordinary words
        "Contact alice@example.com for details",
        "Please write to alice@example.com with the Q3 figures attached",
        "SSID HomeNet on channel 11",
        "the vpn server is down again since 2024",
        "ssh into box1 and restart nginx v2",
        "mail room opens at 0800",
        # answers and numbers
        "the answer to my question is Yes",
        "My number is 42 on the list",
        "my number of guests is 12",
        "my social media ends in 2024 posts",
        "mobile app version 612.345.678",
        "Invoice 612 345 678 is due",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then no secret is found (an address may be, as anywhere) and nothing else changes
    kept = [f for f in result.findings if f.kind is not FindingKind.EMAIL]
    assert kept == []


@MODES
def test_an_address_spelt_out_goes_whole(mode: RedactionMode) -> None:
    # Given an address whose local part's dot is spelt out as well  When redacted
    result = Redactor(mode).redact("write to alice dot smith at gmail dot com, thanks")
    # Then none of it is left but the domain the placeholder keeps
    assert result.text == "write to [EMAIL@gmail.com], thanks"


@MODES
@pytest.mark.parametrize(
    ("html", "redacted"),
    [
        ("<p>API key: J8HP2EebgEXEWIIlSiowZ6gAOrS7eAHTVWgo</p>", "<p>API key: [SECRET]</p>"),
        ("<p>Password: <b>Html!Pass9</b></p>", "<p>Password: <b>[PASSWORD]</b></p>"),
        ("<td>passcode 7731</td>", "<td>passcode [PASSWORD]</td>"),
        # detect-secrets (the thorough mode's second opinion) took the tag into its "Secret Keyword" value
        ("<p>Secret: HRWYl398ZpkpmVxKGmZR53W1FnTtqaRZCZSIIMoK</p>", "<p>Secret: [SECRET]</p>"),
    ],
)
def test_a_value_ends_at_its_closing_tag(mode: RedactionMode, html: str, redacted: str) -> None:
    # Given a value followed by an HTML closing tag (serving keeps HTML)  When redacted
    # Then the tag is kept, not taken into the value
    assert Redactor(mode).redact(html).text == redacted


def test_the_new_shapes_are_secrets_to_policy_s_last_line() -> None:
    # Given candidates that kept a value in one of the new shapes  Then policy's last line refuses them
    assert contains_secret_pattern("Kod do domofonu: 4821")
    assert contains_secret_pattern("pass: correct horse battery staple")
    assert contains_secret_pattern("Front door 1122, back door 3344.")
    assert not contains_secret_pattern("Password: sent to you by SMS")
