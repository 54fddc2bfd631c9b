"""Codes named in more ways, bank details after more labels, and published values kept (a fifteenth probe).

Written before the code by a helper that had read neither the detectors nor the fourteenth probe: 341
secrets and 150 ordinary texts with values that pass their checksums. On `8bddca1` 34 secrets came through
and 32 ordinary texts were damaged. This file's families, in cases of its own:

* a SIM's PUK and a verification code in Chinese, Japanese and Korean, written against its words with no
  space ("验证码是849460"); an app password in Google's four groups of four letters after a password key;
  a keypair saved as a JSON array of its 64 bytes (Solana's id.json);
* bank details after Polish, Mexican, Brazilian, Indian and US labels ("nr rachunku", "CLABE", "conta
  corrente", "खाता संख्या", "RTN"/"DDA") and a Canadian cheque's account beside its transit and institution;
  a card printed in four groups two spaces apart;
* birth dates after "date_of_birth", "nací el", "doğum tarihi", "Дата рождения"; Germany's tax id after
  "Steuerliche Identifikationsnummer".

Kept: what is published by design, a hash named as one (md5, a checksum file's line, a trace's or a
transaction's id, an ETag), an SSH or WireGuard public key, a certificate, an age recipient, an image's
bytes in a data URI, a form's boundary; documentation's blanks ("YOUR_API_KEY", "sk_test_..."), a
Terraform variable; an order number that passes Luhn's check; "The Pass Is Open".
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

KEY_BYTES = (  # 64 bytes, as Solana writes a keypair
    "["
    "130,183,14,238,127,26,80,57,190,240,126,194,52,127,6,110,"
    "208,143,93,199,81,36,71,227,64,67,0,2,107,110,84,85,"
    "148,160,101,104,93,100,196,152,11,184,212,84,74,135,33,169,"
    "154,1,173,33,158,181,156,246,161,94,246,241,90,29,131,11"
    "]"
)
FOUND = [
    ("PUK code: 82736451", "82736451", FindingKind.SECRET),
    ("验证码：552781，五分钟内有效", "552781", FindingKind.SECRET),  # noqa: RUF001
    ("認証コード 883120 を入力してください", "883120", FindingKind.SECRET),
    ("인증번호는 441902 입니다", "441902", FindingKind.SECRET),
    ("EMAIL_HOST_PASSWORD=qwpz rtkd mvbn yhsa", "qwpz rtkd mvbn yhsa", FindingKind.PASSWORD),
    (f"cat ~/.config/solana/id.json\n{KEY_BYTES}", KEY_BYTES, FindingKind.SECRET),
    ("nr rachunku: 61109010140000071219812874", "61109010140000071219812874", FindingKind.BANK_ACCOUNT),
    ("CLABE interbancaria: 032180000118359719", "032180000118359719", FindingKind.BANK_ACCOUNT),
    ("Itaú, agência 0341, conta corrente 12345-6", "12345-6", FindingKind.BANK_ACCOUNT),
    ("खाता संख्या 12345678901, IFSC HDFC0001234", "12345678901", FindingKind.BANK_ACCOUNT),
    ("RTN: 021000021\nDDA: 123456789012", "123456789012", FindingKind.BANK_ACCOUNT),
    ("void cheque: transit 12345, institution 003, account 1234567", "1234567", FindingKind.BANK_ACCOUNT),
    ("card 4111  1111  1111  1111, exp 09/29", "4111  1111  1111  1111", FindingKind.CARD),
    ("date_of_birth: 1975-04-12", "1975-04-12", FindingKind.DATE_OF_BIRTH),
    ("nací el 3 de mayo de 1980 en Sevilla", "3 de mayo de 1980", FindingKind.DATE_OF_BIRTH),
    ("doğum tarihi: 12.05.1988", "12.05.1988", FindingKind.DATE_OF_BIRTH),
    ("Дата рождения: 01.02.1990", "01.02.1990", FindingKind.DATE_OF_BIRTH),
    ("Steuerliche Identifikationsnummer: 86 095 742 719", "86 095 742 719", FindingKind.GOV_ID),
]
KEPT = [
    "md5: 9e107d9d372bb6826bd81d3542a419d6  setup.exe",
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  ubuntu-24.04.iso",
    "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    'ETag: "33a64df551425fcc55e4d42a148795d9"',
    "eth tx 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060 confirmed",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGE6zqYx0pKBGnHh8kZ1Ao0wmyfOQ1r2FgB deploy@ci",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
    "-----END CERTIFICATE-----",
    "[Peer]\nPublicKey = On548/x0pKBGnHh8kZ1Ao0wmyfOQ1r2FgB+fJzQ8YbW0=",
    "age -r age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p -o out.enc in.txt",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAApkq7IfpShpTfQ">',
    "Content-Type: multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
    "export OPENAI_API_KEY=YOUR_API_KEY",
    "Set `STRIPE_SECRET_KEY=sk_test_...` in your .env file.",
    "db_password = var.db_password",
    "Order #112-4829103-7718263 has shipped.",
    "Chapter 7: The Pass Is Open",
    "check account 123456 in the log",
    "0.06.2.3  2000-07-28 20:40:25  ra",
]


@pytest.mark.parametrize(("text", "value", "kind"), FOUND)
def test_the_value_is_redacted(text: str, value: str, kind: FindingKind) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, kind, value)


@pytest.mark.parametrize("text", KEPT)
def test_a_published_value_or_a_blank_is_kept(text: str) -> None:
    assert Redactor(RedactionMode.THOROUGH).redact(text).text == text
