"""Secrets a chat or a note gives in passing, from a thirteenth probe (30 shapes; 14 came through on `0910de2`).

Read now: a combination stated for a thing only a combination opens ("safe = 24-11-08", "padlock: 74 19
33", "my locker's combo, if you need it, is 19-23-7"); a password in brackets later in its word's sentence
("PW for the shared drive hasn't changed (Winter2025!)"); a login named as an Apple ID, an account or
an e-mail address, then "and it's X"; a network's name and its key after a slash ("WiFi: HomeNet /
BlueKettle2024"). Still through, as the closing note says: a passphrase after "the key is", a password
built from a hint, "the code: 5518" with nothing it opens, "bank app 4417", "the alarm: 0912" (an alarm
clock's time reads the same), a password before the account it opens and its user, "same as always, X"
after a label, and "psst... hunter2".
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
        ("reminder to self, safe = 24-11-08", "24-11-08"),
        ("padlock: 74 19 33", "74 19 33"),
        ("my locker's combo, if you need it, is 19-23-7", "19-23-7"),
        ("combination: 12-34-56", "12-34-56"),
        ("PW for the shared drive hasn't changed (Winter2025!)", "Winter2025!"),
        ("Passwort geändert (Sommer2026!)", "Sommer2026!"),
        ("My Apple ID is alice@icloud.com and it's Orchard!88", "Orchard!88"),
        ("my account is alice88 and it's Kestrel77", "Kestrel77"),
        ("WiFi: HomeNet / BlueKettle2024", "BlueKettle2024"),
    ],
)
def test_the_value_is_replaced(mode: RedactionMode, text: str, value: str) -> None:
    assert_value_replaced(mode, text, FindingKind.PASSWORD, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "the safe is 12 34 56 cm wide",
        "the vault is 10 - 12 m deep",
        "the locker is 2 3 4 doors down",
        "the lock was changed on 12-04-23",
        "my password manager (Bitwarden2) is great",
        "Password rules changed (Windows11 only)",
        "the password is set (see ticket INC-40021)",
        "My email is bob@example.org and it is Tuesday",
        "wifi: 2.4GHz / 5GHz both work",
        "SSID: Office / Guest",
    ],
)
def test_what_shares_the_shape_stays(mode: RedactionMode, text: str) -> None:
    result = Redactor(mode).redact(text)
    assert [finding.kind for finding in result.findings if finding.kind is not FindingKind.EMAIL] == []
