"""Payment card numbers (Luhn-checked) and IBANs (mod-97-checked): checksums keep order numbers safe."""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, bounded, hit, luhn_ok

# Patterns start with a character class (no look-behind, no \b) so the engine can skip ahead fast;
# boundaries are checked in code.
_CARD = re.compile(r"\d(?:[ \-]?\d){12,18}")
_IBAN = re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?")


def _iban_ok(compact: str) -> bool:
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def cards(text: str) -> Iterator[Hit]:
    for m in _CARD.finditer(text):
        digits = m.group().replace(" ", "").replace("-", "")
        if bounded(text, m.start(), m.end()) and luhn_ok(digits):
            yield hit(m.start(), m.end(), FindingKind.CARD, "card:luhn")


def ibans(text: str) -> Iterator[Hit]:
    for m in _IBAN.finditer(text):
        if m.start() and text[m.start() - 1].isalnum():
            continue
        raw = m.group()
        # The greedy match may swallow a following upper-case token: try shorter endings too.
        for cut in range(len(raw), 14, -1):
            candidate = raw[:cut].rstrip()
            if _iban_ok(candidate.replace(" ", "")):
                yield hit(m.start(), m.start() + len(candidate), FindingKind.IBAN, "iban:mod97")
                break
