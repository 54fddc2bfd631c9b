"""Personal data a third held-out probe found coming through: IP addresses, the last digits of an id,
security answers written without a colon, and a password written before the word that names it.

Each positive failed before (the value came through); each negative is ordinary text that shares a
word or a shape with one of them and must come through unchanged.
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
        # An address names a connection, and so often a person: every address goes, with its port or prefix.
        ("my home IP is 203.0.113.42", FindingKind.IP_ADDRESS, "203.0.113.42"),
        ("whitelist 198.51.100.7:8443 please", FindingKind.IP_ADDRESS, "198.51.100.7:8443"),
        ("the office range is 192.0.2.0/24.", FindingKind.IP_ADDRESS, "192.0.2.0/24"),
        ("(10.0.0.1)", FindingKind.IP_ADDRESS, "10.0.0.1"),
        ("Meine IPv6-Adresse ist 2001:db8:85a3::8a2e:370:7334", FindingKind.IP_ADDRESS, "2001:db8:85a3::8a2e:370:7334"),
        ("link-local fe80::1ff:fe23:4567:890a%eth0 only", FindingKind.IP_ADDRESS, "fe80::1ff:fe23:4567:890a%eth0"),
        ("2001:0db8:0000:0000:0000:ff00:0042:8329", FindingKind.IP_ADDRESS, "2001:0db8:0000:0000:0000:ff00:0042:8329"),
        # Part of an id confirms an identity on a phone line as well as the whole.
        ("the last four of my SSN are 6789", FindingKind.GOV_ID, "6789"),
        ("my SSN ends in 6789 btw", FindingKind.GOV_ID, "6789"),
        ("last 4 digits of my social security number: 6789", FindingKind.GOV_ID, "6789"),
        ("Passport ending with 4471", FindingKind.GOV_ID, "4471"),
        # A security answer after the question, or a name after "maiden name" with no link at all.
        ("mother's maiden name Kowalski", FindingKind.PASSWORD, "Kowalski"),
        ("her maiden name Smith-Jones is on the form", FindingKind.PASSWORD, "Smith-Jones"),
        ("Security question: first car? Answer: Corolla", FindingKind.PASSWORD, "Corolla"),
        ("security question - city of birth - answer - Lisbon", FindingKind.PASSWORD, "Lisbon"),
        # The value written first, then the word that names it.
        ("Use Pineapple$42 as the password for the portal", FindingKind.PASSWORD, "Pineapple$42"),
        ("Summer2024! is my password", FindingKind.PASSWORD, "Summer2024!"),
        ('"Tr0ub4dor&3" is the new wifi password', FindingKind.PASSWORD, "Tr0ub4dor&3"),
        ("K8s#deploy is our staging password", FindingKind.PASSWORD, "K8s#deploy"),
        ("Sonnenblume#7 ist mein Passwort", FindingKind.PASSWORD, "Sonnenblume#7"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text that states the value  When it is redacted
    result = Redactor(mode).redact(text)
    # Then the value is gone, replaced by its kind's placeholder
    assert value not in result.text
    assert kind.placeholder in result.text


@MODES
@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Version 10.0.19045.3693 installed", "10.0.19045.3693"),
        ("Upgraded the router firmware to v1.2.3.4 yesterday", "1.2.3.4"),
        ("build 2.0.0.1 is out", "2.0.0.1"),
        ("See section 4.2.1.3 of the contract", "4.2.1.3"),
        ("the OID 1.3.6.1.4.1 is assigned", "1.3.6.1.4.1"),
        ("999.1.1.1 is no address", "999.1.1.1"),
        ("The call moved to 12:30:45 UTC", "12:30:45"),
        ("printer MAC 00:1A:2B:3C:4D:5E", "00:1A:2B:3C:4D:5E"),
        ("use std::vector here", "std::vector"),
        ("Charged to the card ending in 4242", "4242"),
        ("the meeting ends at 1530", "1530"),
        ("the last four invoices total 1200", "1200"),
        ("my maiden name is on file", "maiden name is on file"),
        ("Summer2024 is the password policy's example", "Summer2024"),
        ("The report v2-final is the password-protected one", "v2-final"),
        ("Please reset my password", "reset my password"),
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str, kept: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then it comes through unchanged
    assert kept in result.text
    assert result.findings == ()


def test_an_ip_address_is_personal_but_not_a_secret() -> None:
    # Given a candidate that names an address  Then policy's last line does not read it as a secret:
    # the address is redacted as personal data, and the sentence around it may still be remembered
    assert not contains_secret_pattern("my home IP is 203.0.113.42")
    assert contains_secret_pattern("the last four of my SSN are 6789")
