"""The redaction component: what must never survive, what must survive, in both modes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.common.redaction import (
    FindingKind,
    RedactionMode,
    Redactor,
    contains_secret_pattern,
    contains_secret_placeholder,
    fold_for_matching,
)
from tests.fixtures import FIXTURES_DIR

FIXTURES = FIXTURES_DIR
MODES = pytest.mark.parametrize("mode", list(RedactionMode))


def alice() -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((FIXTURES / "alice.json").read_text())
    return fixture


@MODES
def test_fixture_phone_and_password_never_survive(mode: RedactionMode) -> None:
    # Given every text of Alice's fixture requests
    fixture = alice()
    texts = [
        value
        for request in fixture["requests"]
        for value in [*request["content"].values(), *(t["summary"] for t in request["tool_outcomes"])]
    ]
    forbidden = [s for request in fixture["requests"] for s in request["expect"].get("never_stored_anywhere", [])]
    # When each is redacted
    redacted = [Redactor(mode).redact(text).text for text in texts]
    # Then no forbidden string survives anywhere
    assert forbidden, "the fixture names strings that must never be stored"
    assert not [(s, t) for s in forbidden for t in redacted if s in t]


@MODES
def test_fixture_placeholders_and_kept_text(mode: RedactionMode) -> None:
    # Given Bob's mail and Alice's VPN mail
    bob, vpn = alice()["requests"][0]["content"]["body"], alice()["requests"][3]["content"]["body"]
    # When redacted
    bob_result, vpn_result = Redactor(mode).redact(bob), Redactor(mode).redact(vpn)
    # Then typed placeholders replace the values, the e-mail keeps its domain, the words stay
    assert "Call me on [PHONE] if that is easier." in bob_result.text
    assert "forward every invoice to [EMAIL@partner-payments.example]." in bob_result.text
    assert bob_result.kinds == {FindingKind.PHONE, FindingKind.EMAIL}
    assert not bob_result.has_secret
    assert vpn_result.text == "My VPN password is [PASSWORD] - use it if the calendar sync needs re-auth."
    assert vpn_result.has_secret


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Call (212) 555-0199 tomorrow", FindingKind.PHONE, "(212) 555-0199"),
        ("UK desk: +44 20 7946 0958.", FindingKind.PHONE, "+44 20 7946 0958"),
        ("Write to dana.whitfield@acme.example today", FindingKind.EMAIL, "dana.whitfield@acme.example"),
        ("Card 4111 1111 1111 1111 on file", FindingKind.CARD, "4111 1111 1111 1111"),
        ("Pay to DE89 3704 0044 0532 0130 00 please", FindingKind.IBAN, "DE89 3704 0044 0532 0130 00"),
        ("SSN 123-45-6789 for HR", FindingKind.GOV_ID, "123-45-6789"),
        ("I live at 1600 Pennsylvania Avenue, Suite 4 now", FindingKind.ADDRESS, "1600 Pennsylvania Avenue"),
        ("key AKIAIOSFODNN7EXAMPLE in the job", FindingKind.SECRET, "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 leaked", FindingKind.SECRET, "ghp_abcdefghij"),
        ("api_key = sk-proj-abcdefghijklmnopqrstuvwx1234", FindingKind.SECRET, "sk-proj-abcdefghij"),
        ("see https://bob:hunter22@files.example/x", FindingKind.SECRET, "hunter22"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", FindingKind.SECRET, "eyJhbG"),
        ("pwd: S3cr3t!xyz for the box", FindingKind.PASSWORD, "S3cr3t!xyz"),
        ("the passcode 7731 opens the door", FindingKind.PASSWORD, "7731"),
        ("The password for the guest wifi is ocean-breeze.", FindingKind.PASSWORD, "ocean-breeze"),
        ("My PIN is 4491.", FindingKind.PASSWORD, "4491"),
    ],
)
def test_each_kind_is_replaced_by_its_placeholder(
    mode: RedactionMode, text: str, kind: FindingKind, value: str
) -> None:
    # Given a text holding one value of a kind
    # When redacted
    result = Redactor(mode).redact(text)
    # Then the value is gone and the kind's placeholder is there
    assert value not in result.text
    assert kind in result.kinds
    assert kind.placeholder in result.text or (kind is FindingKind.EMAIL and "[EMAIL@acme.example]" in result.text)


@MODES
def test_multi_word_passphrase_is_removed_to_the_end_of_the_sentence(mode: RedactionMode) -> None:
    # Given passphrases with spaces
    text = "The passphrase is correct horse battery staple. Thanks!\nrecovery phrase: abandon ability able\nBob"
    # When redacted
    result = Redactor(mode).redact(text)
    # Then no word of either survives, the sentence around them does
    assert result.text == "The passphrase is [PASSWORD]. Thanks!\nrecovery phrase: [PASSWORD]\nBob"


@MODES
def test_private_key_block_is_removed_whole(mode: RedactionMode) -> None:
    # Given a PEM private key pasted into a mail
    text = "Here it is:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x\nQk9C\n-----END RSA PRIVATE KEY-----\nBob"
    # When redacted
    result = Redactor(mode).redact(text)
    # Then nothing of the block remains
    assert result.text == "Here it is:\n[SECRET]\nBob"


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "Sync with Bob Tan (partner.example), Tue 2026-12-08 10:30-11:00, accepted by Alice",
        "Please keep my meetings after 10:00 - mornings are for focus work.",
        "Send me the password reset link, I forgot it.",
        "Card 4111 1111 1111 1112 fails the checksum",
        "Invoice INV-4101 from vendor.example, total 1,250.00 EUR, due 2026-12-31",
        "Pin the agenda to the channel.",
    ],
)
def test_benign_text_is_unchanged(mode: RedactionMode, text: str) -> None:
    # Given text with dates, times, amounts and harmless uses of sensitive words
    # When redacted
    result = Redactor(mode).redact(text)
    # Then it is unchanged and nothing is reported
    assert (result.text, result.findings) == (text, ())


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "My p\u0430ssw\u043erd is Hunter22!",  # Cyrillic a and o
        "pass\u200bword: x9y8z7",  # zero-width space inside the keyword
        "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44 is Hunter22!",  # fullwidth letters
    ],
)
def test_lookalike_keywords_still_trigger(mode: RedactionMode, text: str) -> None:
    # Given a password statement whose keyword is disguised
    # When redacted
    result = Redactor(mode).redact(text)
    # Then the value is gone, and the disguised keyword is left as it was written
    assert result.has_secret
    assert "Hunter22" not in result.text and "x9y8z7" not in result.text
    assert result.text.endswith("[PASSWORD]") or result.text.endswith("[SECRET]")


@MODES
def test_redaction_is_idempotent_and_offsets_point_into_the_original(mode: RedactionMode) -> None:
    # Given a text with several kinds
    text = "Reach me at +1 415 555 0134 or bob.tan@partner.example; pwd: Tr0ub4dor&3. Card 4111-1111-1111-1111."
    redactor = Redactor(mode)
    # When redacted twice
    once = redactor.redact(text)
    twice = redactor.redact(once.text)
    # Then the second pass changes nothing and the findings locate the originals
    assert twice.text == once.text and twice.findings == ()
    located = {f.kind: text[f.start : f.end] for f in once.findings}
    assert located == {
        FindingKind.PHONE: "+1 415 555 0134",
        FindingKind.EMAIL: "bob.tan@partner.example",
        FindingKind.PASSWORD: "Tr0ub4dor&3",
        FindingKind.CARD: "4111-1111-1111-1111",
    }


@pytest.mark.parametrize(
    "text",
    [
        "use zQx7Lm2Vb9Rt4Kp1Wn8Yc3Hd6Fg0Js5Ae for the integration",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "NI number QQ123456C? no: AB 12 34 56 C",
        "born on 14/03/1985",
        "Hauptstra\u00dfe 12, 10115 Berlin",
    ],
)
def test_fast_and_thorough_modes_have_the_same_coverage(text: str) -> None:
    # Given text only the old thorough mode (or neither mode) used to catch
    # When redacted in each mode
    fast, thorough = Redactor(RedactionMode.FAST).redact(text), Redactor(RedactionMode.THOROUGH).redact(text)
    # Then both remove the same spans: serving (thorough) stores nothing the worker would remove
    assert fast.text == thorough.text != text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My AWS key is AKIAIOSFODNN7EXAMPLE", True),
        ("The wifi password is hunter22", True),
        ("The shared p\u0430ssword is Winter2026!", True),
        ("Card 4111 1111 1111 1111", True),
        ("My SSN is 123-45-6789", True),
        ("My VPN password is [PASSWORD]", False),
        ("Call me on [PHONE] or +1 415 555 0134", False),
        ("Please keep my meetings after 10:00", False),
    ],
)
def test_contains_secret_pattern_is_policys_last_line(text: str, expected: bool) -> None:
    # Given a candidate text  When checked  Then only surviving secrets (not placeholders, not phones) count
    assert contains_secret_pattern(text) is expected


def test_secret_placeholder_and_folding_helpers() -> None:
    # Given texts with and without the place of a secret
    # When checked  Then a secret placeholder is recognised and look-alikes fold to Latin
    assert contains_secret_placeholder("My VPN password is [PASSWORD] - use it")
    assert contains_secret_placeholder("key: [SECRET]")
    assert not contains_secret_placeholder("Call me on [PHONE]")
    assert fold_for_matching("r\u0435m\u0435mb\u0435r al\u200bways \uff46orever") == "remember always forever"
