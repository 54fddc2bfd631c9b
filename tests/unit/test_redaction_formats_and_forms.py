"""Secrets as code, config, markup and forms write them, from a third held-out probe (15 of 65 came
through): PowerShell's plain-text secure string, MySQL's IDENTIFIED BY, a URL-encoded "=", a value
inside HTML inline elements or XML CDATA, a label and its value a blank line apart, OpenVPN's static
key, a safe word, a PIN read out in words, a password after "パスワード" and a full-width colon and
bracket, a login "as X with Y", "creds: user, password", a reset code, a VIN and a number plate;
and from a fourth (4 of 40 PII shapes): a unit-first address, "I live on", "acc no", "DL#".

Each positive failed before, except a value in a <span>, kept beside the <b> case as the class's
baseline; each negative shares a word or a shape with one and must come through.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("$p = ConvertTo-SecureString 'P0wer$hell!' -AsPlainText -Force", FindingKind.PASSWORD, "P0wer$hell!"),
        ("CREATE USER 'u'@'%' IDENTIFIED BY 'MyS9l!pw';", FindingKind.PASSWORD, "MyS9l!pw"),
        ("ALTER USER app IDENTIFIED WITH mysql_native_password BY \"N4tive!pw\"", FindingKind.PASSWORD, "N4tive!pw"),
        ("GET /login?user=bob&password%3DHunter2024%21", FindingKind.PASSWORD, "Hunter2024"),
        ("<p>Password: <b>Html!Pass9</b></p>", FindingKind.PASSWORD, "Html!Pass9"),
        ('Password: <span style="font-family:monospace">Sp4n!Value</span>', FindingKind.PASSWORD, "Sp4n!Value"),
        ("<secret><![CDATA[Cd4ta!Secret]]></secret>", FindingKind.PASSWORD, "Cd4ta!Secret"),
        ("Password\n\nTr1cky!Value", FindingKind.PASSWORD, "Tr1cky!Value"),
        ("-----BEGIN OpenVPN Static key V1-----\ne685bdaf659a25a200e2b9e1f1\n-----END OpenVPN Static key V1-----",
         FindingKind.SECRET, "e685bdaf659a25a2"),
        ("Tell Bob the safe word is 'pineapple-express-42'", FindingKind.PASSWORD, "pineapple-express-42"),
        ("the codeword: Bluebird7", FindingKind.PASSWORD, "Bluebird7"),
        ("PIN: one two three four", FindingKind.PASSWORD, "one two three four"),
        ("パスワード\uff1a「Sakura!2026」", FindingKind.PASSWORD, "Sakura!2026"),
        ("Log in as admin with Adm1n!Pass", FindingKind.PASSWORD, "Adm1n!Pass"),
        ("sign in with alice@acme.example / Acme!2026", FindingKind.PASSWORD, "Acme!2026"),
        ("creds: root, T00r!Pass", FindingKind.PASSWORD, "T00r!Pass"),
        ("Password reset code: 558102", FindingKind.SECRET, "558102"),
        ("VIN 1HGCM82633A004352", FindingKind.GOV_ID, "1HGCM82633A004352"),
        ("my car's chassis number is WVWZZZ1JZXW000001.", FindingKind.GOV_ID, "WVWZZZ1JZXW000001"),
        ("my car plate is 7ABC123", FindingKind.GOV_ID, "7ABC123"),
        ("Kennzeichen: M-AB 1234", FindingKind.GOV_ID, "M-AB 1234"),
        ("plaque d'immatriculation AB-123-CD", FindingKind.GOV_ID, "AB-123-CD"),
        # a fourth probe of 40 PII shapes (4 came through)
        ("Flat 12, MG Road, Bengaluru 560001", FindingKind.ADDRESS, "MG Road"),
        ("I live on Maple Drive, number 22", FindingKind.ADDRESS, "Maple Drive"),
        ("sort code 12-34-56, acc no 12345678", FindingKind.BANK_ACCOUNT, "12345678"),
        ("CA DL# D1234567", FindingKind.GOV_ID, "D1234567"),
    ],
)  # fmt: skip
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text that states the value in its own format  When it is redacted
    result = Redactor(mode).redact(text)
    # Then the value is gone, replaced by its kind's placeholder
    assert value not in result.text
    assert kind.placeholder in result.text


@MODES
@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("order 1HGCM82633A004352 shipped", "1HGCM82633A004352"),
        ("the plate is hot", "the plate is hot"),
        ("registration plate 2024 rules apply", "2024"),
        ("number plate rules changed in 2024", "2024"),
        ("Log in as admin with your usual password", "with your usual password"),
        ("sign in with Google", "sign in with Google"),
        ("creds: see the vault, entry Prod", "see the vault, entry Prod"),
        ("Password\n\nForgot your password?", "Forgot your password?"),
        ("<p>Password: <b>required</b></p>", "<b>required</b>"),
        ("the safe word game was fun", "the safe word game was fun"),
        ("PIN: one of the two", "one of the two"),
        ("query?a%3Db&page=2", "a%3Db"),
        ("she lives on 3 cups of coffee a day", "3 cups of coffee"),
        ("Suite 200, All Hands Meeting", "Suite 200"),
        ("the download is at dl.example.com, DL no 5 on the list", "DL no 5"),
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str, kept: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then it comes through unchanged
    assert kept in result.text
    assert result.findings == ()
