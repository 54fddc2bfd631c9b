"""IP and MAC addresses: personal data when they name a person's connection or device.

"my home IP is 203.0.113.42", "my laptop's MAC is 3c:22:fb:12:34:56".

Mail seldom needs one to be understood, so every address is replaced, whoever it names: a server's
address costs nothing to lose, and a reader cannot tell the two apart. What is kept are the dotted
numbers that are not addresses: a version or build ("v1.2.3.4", "Version 10.0.19045.3693", whose
parts are out of range anyway), a section number ("section 1.2.3.4") and a longer dotted run.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# Not glued to a longer dotted number or an identifier on either side; a CIDR suffix or a port is part
# of the address ("10.0.0.0/8", "203.0.113.42:8443").
_IPV4 = re.compile(rf"(?<![\w.])(?:{_OCTET}\.){{3}}{_OCTET}(?:/(?:3[0-2]|[12]?\d)|:\d{{1,5}})?(?![\w]|\.\d)")
# Hex groups with at least two colons; the standard library decides whether the run is an address, so
# times ("12:30:45"), MAC addresses (six groups) and C++ scopes ("std::vector") are not.
_IPV6_CANDIDATE = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?(?![\w:])")
# Six hex pairs with one separator throughout, or Cisco's three dotted quads. A dashed or dotted
# address needs a letter and a digit: digits alone read as an id, letters alone as words.
_MAC = re.compile(
    r"(?<![\w:.\-])(?:[0-9A-Fa-f]{2}(?P<sep>[:\-])(?:[0-9A-Fa-f]{2}(?P=sep)){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:\-]|\.\w)"
)
_NOT_AN_ADDRESS_BEFORE = re.compile(
    r"(?:\b(?:v|ver|version|versions|build|release|rev|revision|firmware|fw|patch|section|sections|chapter|"
    r"clause|paragraph|article|step|item|rule|oid|mib|sdk|kb)\.?|§)[\s:#]*$"
)


def _reads_as_version(lower: str, start: int) -> bool:
    return _NOT_AN_ADDRESS_BEFORE.search(lower, max(0, start - 24), start) is not None


def _is_ipv6(candidate: str) -> bool:
    if sum(c.isalnum() for c in candidate) < 4:
        return False  # "::", "a::b": too little to name a host
    try:
        return isinstance(ipaddress.ip_address(candidate.split("%", 1)[0]), ipaddress.IPv6Address)
    except ValueError:
        return False


_NOT_A_HOST = re.compile(r"(?:0\.0\.0\.0|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|255\.255\.255\.\d{1,3})(?![\d.])")


def ip_addresses(text: str, lower: str) -> Iterator[Hit]:
    if "." in text:
        for m in _IPV4.finditer(text):
            if _NOT_A_HOST.match(m.group()):
                continue  # "0.0.0.0", "127.0.0.1": no one's machine
            if not _reads_as_version(lower, m.start()):
                yield hit(m.start(), m.end(), FindingKind.IP_ADDRESS, "ip:v4")
    if "::" in text or text.count(":") >= 7:
        for m in _IPV6_CANDIDATE.finditer(text):
            if _is_ipv6(m.group()):
                yield hit(m.start(), m.end(), FindingKind.IP_ADDRESS, "ip:v6")


def mac_addresses(text: str, lower: str) -> Iterator[Hit]:
    if text.count(":") < 5 and text.count("-") < 5 and text.count(".") < 2:
        return
    for m in _MAC.finditer(text):
        found = m.group()
        letters, digits = any(c.isalpha() for c in found), any(c.isdigit() for c in found)
        if m.group("sep") != ":" and not (letters and digits):
            continue  # dashed or dotted digits alone read as an id or a number; letters alone as words
        yield hit(m.start(), m.end(), FindingKind.MAC_ADDRESS, "mac")
