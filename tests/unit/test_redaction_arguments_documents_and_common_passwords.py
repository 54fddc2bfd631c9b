"""Passwords passed as arguments, machine-readable zones, ids after more labels, the commonest passwords.

A fourteenth probe, written before the code: 295 secrets in six families (tokens and keys, config and
command lines, chat, money, national ids, contact and health), with valid checksums, and 123 ordinary
texts. On `0a65207` 31 came through; the families this file covers:

* a password whose place in a call or a command names it, with no key beside it: a Go DSN's
  "user:pass@tcp(", "mysql -p'…'" quoted, "define('DB_PASSWORD', '…')", "auth=('user', '…')",
  "net use … /user:X pass", "htpasswd -b file user pass";
* a passport's or an identity card's machine-readable zone (the document number, the holder's name,
  birth date and nationality), and ids after labels the list lacked (Norway's "fødselsnummer" with its
  "ø", Israel's "מספר זהות", a US "social" said for the social security number);
* one of the passwords people choose most, bare after a password's word ("password qwerty"): a bare
  value there needed a digit, as "password manager" and "password reset" follow the word too;
* an authenticator's secret in groups of four base32 characters, as a setup page shows it for typing;
* a door's code with what the door belongs to between them ("code de la porte d'entrée : B4721"), and a
  bank account after its Japanese or Chinese label, which no space separates from the words around it.

The probe's ordinary texts found false positives too, fixed here and kept below: a UUID inside a token
("request_id=<uuid>", an API path) and a subresource-integrity hash read as secrets, a package at its
version ("bootstrap@5.3.3") as an address, "password_min_length = 12" as a password, and "pin 13 of the
Arduino" and e2fsck's "pass 2" as codes.

The cases are this file's own, not the probe's. On `0a65207` every positive but "Authenticator setup key:
MFRG GZDF MZTW Q2LK" (read already after its label) fails, and so do the false positives above; the other
negatives pass on both trees: a template's blank ("password_here", "<your-password>"), a variable
("$MYSQL_PWD", "${DB_PASS}", getenv(…)), a prompt ("/user:bob *"), a merge marker, "social media", a
key's fingerprint in hex groups, and the words that follow "password" in prose.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

ARGUMENTS = [
    ('db, err := sql.Open("mysql", "reporter:Qx7vLm29Tz@tcp(db.internal:3306)/sales")', "Qx7vLm29Tz"),
    ('$ mysqldump -u backup -p"H8#kq2Lm!v" shop > shop.sql', "H8#kq2Lm!v"),
    ("define( 'AUTH_PASSWORD', 'k3$Vq!9zLm' );", "k3$Vq!9zLm"),
    ('os.environ.setdefault("SMTP_PASSWORD", "Rt5#pLw9qZ")', "Rt5#pLw9qZ"),
    ('session.auth = HTTPBasicAuth("svc-reports", "Wm3!kz8QpR")', "Wm3!kz8QpR"),
    ("client = Client(base_url, auth=('ops', 'T7r$eQ2mLx'))", "T7r$eQ2mLx"),
    (r"C:\> net use Y: \\srv02\payroll /user:ACME\kim Fj48sLq2Wz /persistent:no", "Fj48sLq2Wz"),
    ("sudo htpasswd -bB /etc/apache2/.htpasswd editor Np6vRt2QxL", "Np6vRt2QxL"),
]
DOCUMENTS = [
    ("P<NLDDE<BRUIJN<<WILLEKE<LISELOTTE<<<<<<<<<<<\nSPECI20142NLD6503101F2403096999999990<<<<<84", "SPECI2014"),
    ("P<NLDDE<BRUIJN<<WILLEKE<LISELOTTE<<<<<<<<<<<\nSPECI20142NLD6503101F2403096999999990<<<<<84", "BRUIJN"),
    ("I<UTOD231458907<<<<<<<<<<<<<<<\n7408122F1204159UTO<<<<<<<<<<<6\nERIKSSON<<ANNA<MARIA<<<<<<<<<<", "D23145890"),
    ("fødselsnummer 01129955131", "01129955131"),
    ("Fødselsnr.: 01129955131", "01129955131"),
    ("מספר זהות: 123456782", "123456782"),
    ("رقم الهوية 2345678901", "2345678901"),
    ("my social is 219099999, they asked for it on the form", "219099999"),
]
COMMON_PASSWORDS = [
    ("test box: user admin, password letmein", "letmein"),
    ("the wifi password sunshine works in the garden too", "sunshine"),
    ("Passwort qwertz, Benutzer kim", "qwertz"),
]
# A door's code with what the door belongs to between them; a bank account in Japanese and Chinese.
CODES_AND_ACCOUNTS = [
    ("Le code de la porte d'entrée : B4721", "B4721", FindingKind.PASSWORD),
    ("Code für die Haustür der Wohnung: 4471", "4471", FindingKind.PASSWORD),
    ("the code for the alarm of the shop is 8812", "8812", FindingKind.PASSWORD),
    ("口座番号：普通 4837215 三菱UFJ銀行 渋谷支店", "4837215", FindingKind.BANK_ACCOUNT),  # noqa: RUF001
    ("我的银行账号是6222020200112233445", "6222020200112233445", FindingKind.BANK_ACCOUNT),
]
SPACED_KEYS = [
    ("If you can't scan the code, type this key: qzmf 3xk7 lpwa 62vj yte4 nbc5 ruod", "qzmf 3xk7 lpwa 62vj"),
    ("Authenticator setup key: MFRG GZDF MZTW Q2LK", "MFRG GZDF MZTW Q2LK"),
]
KEPT = [
    "define('DB_PASSWORD', getenv('DB_PASSWORD'));",
    "define( 'DB_PASSWORD', 'password_here' );",
    'HTTPBasicAuth("svc", "<your-password>")',
    r"net use Z: \\srv\share /user:bob *",
    'mysql -u root -p"$MYSQL_PWD"',
    'dsn := "user:${DB_PASS}@tcp(db:3306)/x"',
    "requests.get(url, auth=(user, pw))",
    "<<<<<<< HEAD\nx = 1\n=======\nx = 2\n>>>>>>> feature",
    "std::cout<<VALUE<<std::endl<<OTHER<<std::flush;",
    "social media: 12345678 followers",
    "the social network has 2000000 users",
    "Open the password manager, then the password reset page.",
    "The password field is password protected by default.",
    "fingerprint of the new key: 7C6B 7C5D 5E2B 6356 A926 F04F 6E3C BCE9",
    "what have they been doing with this town",
    "2024-05-11 09:12:44 INFO request_id=58fd4d87-c760-4238-9812-93eb6df37f5a status=200",
    "GET /api/v1/users/f67f3785-b28f-4c5d-9af9-459a67102481/orders?page=2",
    '"integrity": "sha512-M+Tl85wk5KuThZXPM62reEttvD+YPdFaPH4KcZbYLTw8pVg+A2bGpOtRuHXJdwYUk1S8oVFj9h+HJ3mA1Rj2Xwyg=="',
    '<script src="https://cdn.example/npm/bootstrap@5.3.3/dist/js/bootstrap.min.js"></script>',
    "password_min_length = 12\npassword_require_symbol = true",
    "Connect the LED to pin 13 of the Arduino.",
    "e2fsck now prints ranges in pass 5; (read_and): Pass 0 to read_header.",
    "第12345678号",
    "the code of the day is short",
]


@pytest.mark.parametrize(("text", "value"), ARGUMENTS + COMMON_PASSWORDS)
def test_a_password_named_by_its_place_is_redacted(text: str, value: str) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, FindingKind.PASSWORD, value)


@pytest.mark.parametrize(("text", "value"), DOCUMENTS)
def test_an_identity_document_line_or_a_labelled_id_is_redacted(text: str, value: str) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, FindingKind.GOV_ID, value)


@pytest.mark.parametrize(("text", "value", "kind"), CODES_AND_ACCOUNTS)
def test_a_door_code_or_an_account_number_is_redacted(text: str, value: str, kind: FindingKind) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, kind, value)


@pytest.mark.parametrize(("text", "value"), SPACED_KEYS)
def test_an_authenticator_secret_in_groups_is_redacted(text: str, value: str) -> None:
    assert_value_replaced(RedactionMode.THOROUGH, text, FindingKind.SECRET, value)


@pytest.mark.parametrize("text", KEPT)
def test_blanks_variables_and_ordinary_words_are_kept(text: str) -> None:
    assert Redactor(RedactionMode.THOROUGH).redact(text).text == text
