"""Credentials as the rest of the world writes them, from a second held-out probe of 140 shapes.

Each positive failed before (the value came through); each negative is ordinary text that shares a
word or a shape with one of them and must come through unchanged.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # Password words in scripts the Latin stems do not read, with a colon or the language's "is".
        # a digest beside a credential's word is one, even where the text also speaks of commits
        ("passwd hash for the build 9fceb02d0ae598e95dc970b74767f19372d61af8", FindingKind.SECRET, "9fceb02d0ae5"),
        ("كلمة المرور: Nile2026!", FindingKind.PASSWORD, "Nile2026!"),
        ("كلمة السر الجديدة هي Falafel#77", FindingKind.PASSWORD, "Falafel#77"),
        ("رمز عبور من Tehran1404 است", FindingKind.PASSWORD, "Tehran1404"),
        ("סיסמה: Yarden2026", FindingKind.PASSWORD, "Yarden2026"),
        ("הסיסמה שלי היא Galil_88", FindingKind.PASSWORD, "Galil_88"),
        ("Ο κωδικός πρόσβασης είναι Olympos2026", FindingKind.PASSWORD, "Olympos2026"),  # noqa: RUF001 - Greek, Cyrillic, Turkish letters
        ("Паролата е: Sofia2026!", FindingKind.PASSWORD, "Sofia2026!"),  # noqa: RUF001 - Greek, Cyrillic, Turkish letters
        ("лозинка: Beograd#11", FindingKind.PASSWORD, "Beograd#11"),
        ("мій гасло Kyiv2026!", FindingKind.PASSWORD, "Kyiv2026!"),
        ("मेरा पासवर्ड Delhi@2026 है", FindingKind.PASSWORD, "Delhi@2026"),
        ("รหัสผ่านคือ Bangkok2026", FindingKind.PASSWORD, "Bangkok2026"),
        # Latin-script languages the word lists lacked, and Turkish's possessive suffixes.
        ("mật khẩu: Saigon2026", FindingKind.PASSWORD, "Saigon2026"),
        ("mật khẩu là Hanoi#2026", FindingKind.PASSWORD, "Hanoi#2026"),
        ("kata sandi: Bali2026!", FindingKind.PASSWORD, "Bali2026!"),
        ("kata sandi adalah Jakarta77", FindingKind.PASSWORD, "Jakarta77"),
        ("parolamız: Deniz2026!", FindingKind.PASSWORD, "Deniz2026!"),  # noqa: RUF001 - Greek, Cyrillic, Turkish letters
        ("şifrem: Kartal1903", FindingKind.PASSWORD, "Kartal1903"),
        ("Minu parool on Tallinn2026", FindingKind.PASSWORD, "Tallinn2026"),
        # A user name and a password after a word that names them together.
        ("Zugangsdaten: max / Sommer2026!", FindingKind.PASSWORD, "Sommer2026!"),
        ("identifiants : jdupont / Lyon#2026", FindingKind.PASSWORD, "Lyon#2026"),
        ("inloggegevens: jan | Tulp2026!", FindingKind.PASSWORD, "Tulp2026!"),
        ("use these creds -> svc_backup : B4ckup!Now", FindingKind.SECRET, "B4ckup!Now"),
        ("credenciales: juan / Sol2026!", FindingKind.PASSWORD, "Sol2026!"),
        # A network's key, wherever the language puts "wifi".
        ("WLAN-Schlüssel: Blaubeere!77", FindingKind.SECRET, "Blaubeere!77"),
        ("clé wifi : soleil-levant-42", FindingKind.PASSWORD, "soleil-levant-42"),
        ("la chiave del wifi è Pizza2026", FindingKind.PASSWORD, "Pizza2026"),
        ("Windows product key: VK7JG-NPHTM-C97JM-9MPGT-3V66T", FindingKind.SECRET, "VK7JG-NPHTM-C97JM-9MPGT-3V66T"),
        ("activation code: 7731-2204-9981", FindingKind.SECRET, "7731-2204-9981"),
        # One-time codes with no qualifier before "code", or a verb after the code.
        ("Your code: 884213", FindingKind.SECRET, "884213"),
        ("Enter 5512 to verify your account", FindingKind.SECRET, "5512"),
        ("Please enter the code 330917 when asked", FindingKind.SECRET, "330917"),
        ("Use 604118 to confirm your new device", FindingKind.SECRET, "604118"),
        # A wallet's words and key, a short security answer, an account beside its routing number.
        (
            "seed words: legal winner thank year wave sausage worth useful legal winner thank yellow",
            FindingKind.PASSWORD,
            "sausage",
        ),
        (
            "eth key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
            FindingKind.SECRET,
            "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        ),
        ("security question answer: Rex", FindingKind.PASSWORD, "Rex"),
        ("mother's maiden name: Li", FindingKind.PASSWORD, "Li"),
        ("routing 021000021 account 000123456789", FindingKind.BANK_ACCOUNT, "000123456789"),
        ("wire it to Chase, account: 4471902231", FindingKind.BANK_ACCOUNT, "4471902231"),
    ],
)
def test_the_value_is_replaced_by_its_kind(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text stating one credential or bank detail  When redacted  Then a placeholder of its kind replaces it
    assert_value_replaced(mode, text, kind, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "Het Parool meldt dat de brug dicht is.",
        "Sandi: I'll be there at 10, thanks!",
        "Der Schlüssel liegt unter der Matte.",
        "Der Schlüsseldienst kommt um 10 Uhr.",
        "Kata sandi Anda telah diubah.",
        "Mật khẩu của bạn đã được thay đổi.",
        "Your code review is scheduled for 10:30.",
        "I looked at your code 2 days ago.",
        "Please confirm 3 seats for Friday.",
        "The product key features are listed on page 12.",
        "Product code 4471-22 ships Monday.",
        "My account 20394857 at the gym expires.",
        "The secret words are love and patience.",
        "The seed words for this chapter are listed below.",
        "Random seed: 42 for reproducibility.",
        "tx hash 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        # a build's "passed" and a test's "passing" beside a commit id ("pass" is a credential's stem)
        "Build passed: commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "Tests passing on commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "Security question answers are stored hashed.",
        "First pet: none yet.",
        "identifiant client : voir facture",
        "Zugang über den Hof / Tor 2",
        "clé USB perdue hier",
        "La clé du succès est la patience.",
        "Credentials: ask Bob / Alice",
        "كلمة المرور مطلوبة",
        "הסיסמה שלך פגה",
        "Ο κωδικός σας άλλαξε.",  # noqa: RUF001 - Greek, Cyrillic, Turkish letters
        "Use 2 eggs to complete the recipe.",
    ],
)
def test_words_and_shapes_they_share_with_ordinary_text_stay(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a stated credential  When redacted
    result = Redactor(mode).redact(text)
    # Then it comes through unchanged
    assert result.text == text


@pytest.mark.parametrize(
    "text",
    ["סיסמה: Yarden2026", "Zugangsdaten: max / Sommer2026!", "Your code: 884213", "şifrem: Kartal1903"],
)
def test_policy_last_line_sees_them(text: str) -> None:
    # Given a candidate holding one of these values  Then policy's last line finds a secret in it
    assert contains_secret_pattern(text)


@MODES
@pytest.mark.parametrize(
    ("text", "local"),
    [("mail: jane@例え.jp", "jane"), ("escríbeme a josé@correo.es", "josé"), ("пишите на ivan@почта.рф", "ivan")],
)
def test_internationalised_addresses_are_addresses(mode: RedactionMode, text: str, local: str) -> None:
    # Given an address whose local part or domain is not ASCII  When redacted
    result = Redactor(mode).redact(text)
    # Then the person's part is gone and an address's placeholder (which keeps the domain) stands there
    assert local not in result.text
    assert "[EMAIL@" in result.text
