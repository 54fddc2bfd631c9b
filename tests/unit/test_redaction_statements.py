"""Shapes a held-out probe found passing through: secrets stated a few words away, codes, answers, bank details.

Each positive names the value that must be gone and the kind that must replace it; each negative is
prose about the same things that must come through unchanged (over-redaction costs the memory).
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # A password word, a few words, then the link and the value.
        ("the password we all use for the NAS is Granite77!", FindingKind.PASSWORD, "Granite77!"),
        ("I reset my password to Quokka#2031 this morning", FindingKind.PASSWORD, "Quokka#2031"),
        ("Her password is still the old one: Tamarind_88", FindingKind.PASSWORD, "Tamarind_88"),
        ("p@ssw0rd = Ventoux1912", FindingKind.PASSWORD, "Ventoux1912"),
        ("my pa55word is Larkspur42", FindingKind.PASSWORD, "Larkspur42"),
        # One-time and second-factor codes, digits in groups included.
        ("Your one-time passcode: 604 118", FindingKind.PASSWORD, "604 118"),
        ("TOTP 771203 expires in 30s", FindingKind.PASSWORD, "771203"),
        ("sms code 5521 - do not share", FindingKind.SECRET, "5521"),
        ("MFA: 33 81 92", FindingKind.PASSWORD, "33 81 92"),
        # Answers that unlock an account.
        ("Memorable word: Periwinkle", FindingKind.PASSWORD, "Periwinkle"),
        ("the answer to my security question is Gatsby", FindingKind.PASSWORD, "Gatsby"),
        ("mum's maiden name was Abernethy", FindingKind.PASSWORD, "Abernethy"),
        # Scripts written without spaces, and a pair with no link.
        ("口令\uff1aZephyr2024", FindingKind.PASSWORD, "Zephyr2024"),  # a full-width colon
        ("暗証番号は 8841", FindingKind.PASSWORD, "8841"),
        ("creds deploy / Hx7-pq2", FindingKind.PASSWORD, "Hx7-pq2"),
        # A qualifier spelt with a hyphen, a user/password shorthand, a form's label above its value.
        ("Guest Wi-Fi key: Harbour2044", FindingKind.SECRET, "Harbour2044"),
        ("u: dana p: Kestrel!19", FindingKind.PASSWORD, "Kestrel!19"),
        ("Username\ndana\nPassword\nKestrel!19\n", FindingKind.PASSWORD, "Kestrel!19"),
        # Words that name a secret only with digits, and lists of codes after a plural word.
        ("the safe combination is 31-7-22", FindingKind.PASSWORD, "31-7-22"),
        ("Geheimzahl: 4711", FindingKind.PASSWORD, "4711"),
        ("backup codes 4821 0937, 5512 7730 and 6619 2045", FindingKind.SECRET, "4821 0937, 5512 7730 and 6619 2045"),
        ("recovery codes: 7f3k-2m9q 8d2l-0p1x 3h7z-5v2c", FindingKind.SECRET, "7f3k-2m9q 8d2l-0p1x 3h7z-5v2c"),
        # A credential named in one field and held in the next (.NET config, Kubernetes env, JSON).
        ('<add key="ApiSecret" value="Zx9kLm2Qp7Rt" />', FindingKind.SECRET, "Zx9kLm2Qp7Rt"),
        ("env:\n- name: DB_PASS\n  value: K8sPass!42", FindingKind.PASSWORD, "K8sPass!42"),
        ('{"name": "api_token", "value": "Qw8eRt6yUi4oP2"}', FindingKind.SECRET, "Qw8eRt6yUi4oP2"),
        # Domestic bank details, which carry no checksum that works across banks.
        ("Account no. 004471829301 at Northwind Bank", FindingKind.BANK_ACCOUNT, "004471829301"),
        ("savings account: 7720 1144 09", FindingKind.BANK_ACCOUNT, "7720 1144 09"),
        ("ABA routing 121000358, please", FindingKind.BANK_ACCOUNT, "121000358"),
        ("sort code 40-47-84 and all", FindingKind.BANK_ACCOUNT, "40-47-84"),
        ("Konto-Nr. 5310 2299 17", FindingKind.BANK_ACCOUNT, "5310 2299 17"),
        ("número de cuenta 01821234567890", FindingKind.BANK_ACCOUNT, "01821234567890"),
        # Addresses with the towns, region and postcode after the street, in more countries' shapes.
        ("I'm at 88 Queen St W, Toronto, ON M5H 2N2", FindingKind.ADDRESS, "88 Queen St W, Toronto, ON M5H 2N2"),
        ("Unit 5/22 George St, Sydney NSW 2000", FindingKind.ADDRESS, "Unit 5/22 George St, Sydney NSW 2000"),
        ("P.O. Box 1234, Austin, TX 78767", FindingKind.ADDRESS, "P.O. Box 1234, Austin, TX 78767"),
        ("25 Main St., Dublin 2, D02 XY45 is ours", FindingKind.ADDRESS, "25 Main St., Dublin 2, D02 XY45"),
        ("ul. Marszałkowska 84/92, 00-514 Warszawa", FindingKind.ADDRESS, "ul. Marszałkowska 84/92, 00-514 Warszawa"),
        ("address is 1-2-3 Shibuya, Shibuya-ku, Tokyo", FindingKind.ADDRESS, "1-2-3 Shibuya, Shibuya-ku, Tokyo"),
        # Identity numbers and birth dates under labels the corpus lacked.
        ("my driver licence: SMITH801234AB9CD", FindingKind.GOV_ID, "SMITH801234AB9CD"),
        ("ITIN 912-70-1234 for the filing", FindingKind.GOV_ID, "912-70-1234"),
        ("my bday: 3/14/85", FindingKind.DATE_OF_BIRTH, "3/14/85"),
        # Medical record and health insurance numbers.
        ("MRN: 55102398 (cardiology)", FindingKind.GOV_ID, "55102398"),
        ("health plan ID W88123419", FindingKind.GOV_ID, "W88123419"),
        # A URL's password with no user name before it (Redis, AMQP and others write it so).
        ("REDIS_URL=redis://:Pelican-9921@cache.internal:6379/0", FindingKind.SECRET, "Pelican-9921"),
        # An adverb between the link and the value: "ist jetzt", "est maintenant", "is currently".
        ("Das Kennwort ist jetzt Bergsee!42", FindingKind.PASSWORD, "Bergsee!42"),
        ("le mot de passe est maintenant Chamonix74", FindingKind.PASSWORD, "Chamonix74"),
        # One-time codes as services send them: the code first, a German compound, the qualifier after.
        ("G-482913 is your Google verification code.", FindingKind.SECRET, "482913"),
        ("Use 774120 to sign in to your account", FindingKind.SECRET, "774120"),
        ("Ihr Bestätigungscode lautet 661204", FindingKind.SECRET, "661204"),
        ("Tu código de verificación es 551903", FindingKind.SECRET, "551903"),
        ("Il tuo codice di verifica è 330917", FindingKind.SECRET, "330917"),
        ("Your Apple ID verification code is: 381 204", FindingKind.SECRET, "381 204"),
        # Answers to the pet security question.
        ("security Q - first pet: Biscuit", FindingKind.PASSWORD, "Biscuit"),
        ("my childhood pet's name is Pickles", FindingKind.PASSWORD, "Pickles"),
        # Card numbers grouped with dots, and an IBAN written in lower case.
        ("card 4111.1111.1111.1111 exp 09/29", FindingKind.CARD, "4111.1111.1111.1111"),
        ("iban gb82 west 1234 5698 7654 32 (Barclays)", FindingKind.IBAN, "gb82 west 1234 5698 7654 32"),
        # Addresses spelt out to dodge scrapers.
        ("write to ops.lead (at) northwind (dot) com please", FindingKind.EMAIL, "ops.lead"),
        ("contact: j.kowalski[at]firma[dot]pl", FindingKind.EMAIL, "j.kowalski"),
        ("mail marta.ruiz at correo dot es.", FindingKind.EMAIL, "marta.ruiz"),
    ],
)
def test_the_value_is_replaced_by_its_kind(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text stating one value of a kind  When redacted
    result = Redactor(mode).redact(text)
    # Then no digit or letter run of the value is left, and the kind's placeholder stands there
    assert value not in result.text
    assert all(part not in result.text for part in value.split())
    assert kind in result.kinds
    assert kind.placeholder[:-1] in result.text  # an address's placeholder keeps its domain: [EMAIL@...]


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "The password policy changed to require 14 characters.",
        "Her password manager is Bitwarden2, which she likes.",
        "The password reset ticket is SUP-88120, still open.",
        "Please change your password to something longer soon.",
        "Your password must be at least 12 characters.",
        "Password for user bob7 is in the team vault.",
        "We pass 5/6 of the checks now.",
        "2FA is mandatory for admins from Monday.",
        "The OTP was sent again to your phone.",
        "The maiden voyage leaves on 2026-06-01.",
        "Account number of seats sold is 120.",
        "The accounting review is in room 4.12 at 10:00.",
        "Ticket #661204 about my bank account was closed.",
        "The sort code is printed on your card.",
        "Order number 88412077 ships on Tuesday.",
        "<password>Hx77-Lq!</password>\nRegards, Morgan",
        "The combination of both plans works best.",
        "Password\nForgot your password?\n",
        "Our backup codes policy is in the wiki, see page 12.",
        "u: the user asked p: the product team",
        "See you at 10 Downing Street, Bob will call at 10:30.".replace("10 Downing Street", "[ADDRESS]"),
        "Room 12, Building B, Floor 3 on 14 March",
        '<add key="Theme" value="dark" />',
        "- name: LOG_LEVEL\n  value: debug",
        "Look at this dot com bubble chart from 2001.",
        "We meet at noon dot com style, as usual.",
        "Version 1.2.3 of the app is at build 4111.1111.",
        "The Iban family sent 12 gifts.",
        "My first pet project was a weather app.",
        "The competitive petition about pets is due.",
        "Call 4471 to sign in guests at reception.",
        "Das Kennwort ist jetzt abgelaufen, bitte neu setzen.",
        "Room 4471 is your meeting room.",
        "Ticket 88123 is your code of conduct acknowledgement.",
        "Our postcode 10115 is in Berlin; the code review is at 10:30.",
    ],
)
def test_prose_about_the_same_things_keeps_its_words(mode: RedactionMode, text: str) -> None:
    # Given prose about passwords, codes and accounts (or, last, a tag whose closing half is not a new value)
    # When redacted
    result = Redactor(mode).redact(text)
    # Then nothing outside a stated value is touched
    stated = "Hx77-Lq!"
    expected = text.replace(stated, "[PASSWORD]")
    assert result.text == expected


@pytest.mark.parametrize(
    "text",
    ["account number 004471829301", "I changed my password to Quokka#2031", "OTP 771203", "MRN 55102398"],
)
def test_policy_last_line_sees_the_new_kinds(text: str) -> None:
    # Given a candidate holding one of the newly recognised values  Then policy's last line finds it
    assert contains_secret_pattern(text)
