"""What a password looks like when nothing but its place says it is one: what a password rule asks for.

Detectors that find a value by where it stands ("set it to X", "bank: X", "I use X for everything")
have no credential word to vouch for it, and the same places hold product names, order numbers and
code. A value there counts when it has eight characters or more from three of a rule's four
classes (upper case, lower case, digits, symbols), and names no order, ticket or version, no product
with its version ("Office365", "Windows11") and no code ("Mail::Internet->new", "poly1305.c").
"""

from __future__ import annotations

import re

from services.common.pii.stated_values import PASSWORD_SYMBOLS, password_shaped

# An order's, a ticket's or an invoice's number, a build or a version.
_REFERENCE = re.compile(
    r"(?:order|ticket|case|invoice|inv|ref|id|no|item|sku|pr|issue|build|release|version|v)[#\-_:]?\d",
    re.IGNORECASE,
)
_CODE = re.compile(r"::|->|[(){}<>]|^[\\%$@]|\.(?:c|h|py|js|ts|go|rs|rb|pl|pm|java|cpp|sh|txt|md|html?)$")
_PRODUCTS = re.compile(
    r"(?:windows|win|office|python|java|node|ubuntu|debian|iphone|ipad|galaxy|pixel|ios|android|macos|excel|teams"
    r"|chrome|firefox|safari|edge|react|angular|django|rails|php|mysql|postgres|redis|docker|gpt|claude|gemini"
    r"|llama|xbox|playstation|ps|switch|surface|thinkpad|macbook|airpods)[\-_ ]?\d",
    re.IGNORECASE,
)


# Hex pairs between marks: a MAC address, a key's fingerprint ("00-1A-2B-3C-4D-5E").
_HEX_GROUPS = re.compile(r"(?:[0-9A-Fa-f]{2}[:\-.]){2,}[0-9A-Fa-f]{2}")


def character_classes(value: str) -> int:
    """How many of a password rule's four classes ``value`` draws on: upper case, lower case, digits, symbols."""
    return (
        any(c.isupper() for c in value)
        + any(c.islower() for c in value)
        + any(c.isdigit() for c in value)
        + any(c in PASSWORD_SYMBOLS or c in "!.-" for c in value)
    )


def rule_shaped(value: str) -> bool:
    """Eight characters or more from three of a password rule's four classes; no reference, product or code."""
    if len(value) < 8 or character_classes(value) < 3 or not password_shaped(value) or _CODE.search(value):
        return False
    return _REFERENCE.match(value) is None and _PRODUCTS.match(value) is None and not _HEX_GROUPS.fullmatch(value)
