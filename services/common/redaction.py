"""One redaction component for the whole loop: serving (on the request path) and worker, same coverage.

memloop never persists raw content, so everything that leaves a request passes through here first.
PII and secrets are replaced by typed placeholders (``[PHONE]``, ``[PASSWORD]``...). E-mail
addresses keep their domain (``[EMAIL@partner.example]``): the domain carries provenance (who is
writing, where an instruction wants mail to go) and identifies an organisation, not a person.

Detection runs on a *folded* copy of the text (`services.common.text_folding`) so that "password"
spelt with a Cyrillic "a" is still a password statement; replacements are applied to the original
text through an index map. The detectors themselves live in `services.common.pii` (framework-free);
this module adds phone numbers (``phonenumbers``) and detect-secrets' plugins.

Modes:

* ``THOROUGH`` — every detector of `services.common.pii`, phone numbers at ``POSSIBLE`` leniency,
  and detect-secrets' regex plugins as a second opinion (gated line by line on the literals their
  patterns need, which is what made them affordable on the request path). Serving and the worker
  both use it: serving stores nothing the worker would have redacted.
* ``FAST`` — the same detectors without the detect-secrets pass; kept as the benchmark's baseline
  (``bench/bench_redaction.py`` prints both) and for callers that must not import detect-secrets.

Redaction is idempotent: placeholders are never matched again.

`Redactor.fingerprint` names exactly what a redactor removes: its mode and region and a hash of the
source of every module that decides it (this one, `services.common.pii`, the second opinion, text
folding), the versions of phonenumbers and detect-secrets, and the Unicode tables. Serving writes
its fingerprint into the learning event it commits with the redacted content (`redacted_by`); a
worker whose redactor has the same fingerprint would find nothing more to remove (idempotence), so
it skips that second pass (issue 15: it was about a fifth of the worker's CPU). Any change to a
detector, a library or the mode changes the fingerprint, and the worker redacts again.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata
from pathlib import Path
from typing import Any

import phonenumbers

from services.common.pii import scan as _scan
from services.common.pii.model import SECRET_KINDS, Finding, FindingKind, Hit, hit
from services.common.pii.scan import contains_secret_pattern, contains_secret_placeholder
from services.common.redaction_second_opinion import detect_secrets_hits
from services.common.text_folding import fold_for_matching

__all__ = [
    "SECRET_KINDS",
    "Finding",
    "FindingKind",
    "RedactionMode",
    "RedactionResult",
    "Redactor",
    "contains_secret_pattern",
    "contains_secret_placeholder",
    "fold_for_matching",
]


class RedactionMode(StrEnum):
    FAST = "fast"
    THOROUGH = "thorough"


@dataclass(frozen=True)
class RedactionResult:
    """The redacted text and what was removed from it, so callers can set sensitivity."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def kinds(self) -> frozenset[FindingKind]:
        return frozenset(f.kind for f in self.findings)

    @property
    def has_secret(self) -> bool:
        return bool(self.kinds & SECRET_KINDS)


_PHONE_HINT = re.compile(r"[+(\d][\d\s().\-/]{6,21}\d")


def _phone_hints(text: str) -> Iterator[tuple[int, int]]:
    """Runs of digits, spaces and phone punctuation holding at least seven digits."""
    for m in _PHONE_HINT.finditer(text):
        if sum(c.isdigit() for c in m.group()) >= 7:
            yield m.start(), m.end()


# Words that name what a number is when it is not a phone number.
_ID_LABEL_BEFORE = re.compile(
    r"(?:(?:isbn(?:-1[03])?|issn|order|invoice|tracking|sku|ref|reference|part|ticket|case|serial|account|acct|po"
    r"|customer|member|policy|booking|meeting|conference|bestellnummer|rechnung|commande|factura|pedido"
    # a moment in seconds since 1970, a parcel's waybill, a paper's DOI, a chemical's CAS number
    r"|timestamp|ts|epoch|[a-z]+_at|created|updated|modified|waybill|awb|doi|cas(?: number| no\.?| rn)?"
    r"|upc|ean|gtin|barcode)"
    r"(?:\s*(?:number|no\.?|nr\.?|#|id|ref))?|no\.|nr\.?|\u3012)\W{0,4}\Z"  # U+3012: a Japanese postcode
)


_DATE_LIKE = re.compile(r"\d{1,4}([./\-])\d{1,2}\1\d{2,4}")
_DECIMAL = re.compile(r"\d{1,3}\.\d{5,}")
_DOTTED = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])(?:/\d{1,2}|:\d{1,5})?")


def _glues(piece: str) -> bool:
    """A letter or digit that makes a number part of a token. Chinese, Japanese and Korean are written
    without spaces, so their characters touch a number without being part of it ("電話番号は090-1234-5678です")."""
    return piece.isalnum() and not (
        "\u3040" <= piece <= "\u9fff" or "\uac00" <= piece <= "\ud7ff" or "\u1100" <= piece <= "\u11ff"
    )  # kana and ideographs, Hangul syllables, and the Hangul letters folding decomposes them into


def _part_of_an_id(text: str, start: int, end: int) -> bool:
    """A digit run glued into a longer token ("ORD-2026-004512", "1Z999AA1012...") or labelled as an id."""
    before, after = text[max(0, start - 2) : start], text[end : end + 2]
    glued_before = (
        _glues(before[-1:])
        or (before[-1:] in ("-", "/") and _glues(before[:1]))
        or (before[-1:] == "." and before[:1].isdigit())  # "10.1145/3442188.3445922": a DOI's last part
    )
    glued_after = _glues(after[:1]) or (after[:1] in ("-", "/") and _glues(after[1:]))
    if _DATE_LIKE.fullmatch(text[start:end]) or _DECIMAL.fullmatch(text[start:end]):
        return True  # a date, or a measured value ("1.380649e-23")
    if any(
        m.start() <= start < m.end() or start <= m.start() < end
        for m in _DOTTED.finditer(text, max(0, start - 16), end + 16)
    ):
        return True  # "10.4.0.0/16", "10.0.12.41:5432": an address or a network, read by its own detector
    return glued_before or glued_after or _ID_LABEL_BEFORE.search(text[max(0, start - 24) : start].lower()) is not None


# Regions tried, strictly (VALID), for a number written nationally with a leading 0.
_NATIONAL_REGIONS = ("GB", "DE", "FR", "NL", "IT", "ES", "AU", "IN")
# And where Chinese, Japanese or Korean is written beside the number ("내 전화번호는 010-1234-5678").
_CJK_REGIONS = ("KR", "JP", "CN", "TW")


# phonenumbers costs about 0.35 ms per hint and region tried. A body of nothing but digit groups
# ("0123 4567 " repeated, within HandleRequest's 256 KB) once cost serving 54 s of CPU, nine regions per
# hint. Past this many matcher calls in one text, a hint is judged by its shape alone: 7 to 15 digits,
# not part of an id or a date, is redacted unchecked (fail closed). The benchmark's PII-laden mails hold
# at most 23 hints.
MATCHER_CALLS_PER_TEXT = 128


def _phone_shaped(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A hint trimmed to its digits (and a leading "+" or "("), if it could be one phone number."""
    while start < end and not (text[start].isdigit() or text[start] in "+("):
        start += 1
    while end > start and not text[end - 1].isdigit():
        end -= 1
    digits = sum(c.isdigit() for c in text[start:end])
    if not 7 <= digits <= 15 or _part_of_an_id(text, start, end):
        return None
    return start, end


def _phones(region: str, leniency: Any) -> Callable[[str], Iterable[Hit]]:
    def detect(text: str) -> Iterator[Hit]:
        # phonenumbers is thorough but costs ~0.1 ms per KB; run it only around digit runs.
        calls = 0
        for hint_start, hint_end in _phone_hints(text):
            if calls >= MATCHER_CALLS_PER_TEXT:
                if shaped := _phone_shaped(text, hint_start, hint_end):
                    yield hit(*shaped, FindingKind.PHONE, "phone-shaped:unchecked")
                continue
            lo = max(0, hint_start - 24)
            window = text[lo : min(len(text), hint_end + 24)]
            found_from = hint_end  # where the first number found in the hint starts
            calls += 1
            for match in phonenumbers.PhoneNumberMatcher(window, region, leniency=leniency):
                start, end = lo + match.start, lo + match.end
                if start < hint_end and end > hint_start and not _part_of_an_id(text, start, end):
                    found_from = min(found_from, start)
                    yield hit(start, end, FindingKind.PHONE, "phonenumbers")
            # A national number ("0800 123 4567", "0171 1234567"), found by no region or only in part
            # (its last seven digits read as a local number): other regions.
            national = False
            if text[hint_start] == "0" and found_from > hint_start:
                nearby_cjk = any(not _glues(c) and c.isalnum() for c in window)
                for other in _NATIONAL_REGIONS + (_CJK_REGIONS if nearby_cjk else ()):
                    calls += 1
                    matches = list(phonenumbers.PhoneNumberMatcher(window, other, leniency=phonenumbers.Leniency.VALID))
                    hits = [(lo + m.start, lo + m.end) for m in matches]
                    hits = [
                        (s, e) for s, e in hits if s < hint_end and e > hint_start and not _part_of_an_id(text, s, e)
                    ]
                    for start, end in hits:
                        yield hit(start, end, FindingKind.PHONE, f"phonenumbers:{other}")
                    if hits:
                        national = True
                        break
            # A number its label calls a phone, in a format no region tried reads ("Mi teléfono es 612
            # 345 678" read as American): its shape is enough.
            labelled = (
                found_from == hint_end
                and not national
                and _PHONE_LABEL.search(text, max(0, hint_start - 32), hint_start)
            )
            if labelled and (shaped := _phone_shaped(text, hint_start, hint_end)):
                yield hit(*shaped, FindingKind.PHONE, "phone-shaped:labelled")

    return detect


# A word that names a phone number, just before one (matched on folded text: no accents).
_PHONE_LABEL = re.compile(
    r"\b(?:phone|telephone|tel|mobile|mobil|cell|cellphone|whatsapp|sms|fax|telefono|telefon|telefoon|telefone"
    r"|movil|celular|cellulare|handynummer|telefonnummer|rufnummer|numer telefonu|numero de telefono"
    r"|numero de telephone|call me on|call me at|text me on|text me at)\b"
    r"(?:[^\w\n]{0,4}(?:is|es|est|ist|e|number|nummer|numero|no|nr|of|my|mi|mein|meine|mon|ma)\b)*[^\w\n]{0,4}\Z",
    re.I,
)


@functools.cache
def _detectors_digest() -> str:
    """SHA-256 over everything that decides what is redacted (see the module's docstring)."""
    from services.common import pii, redaction_second_opinion, text_folding

    digest = hashlib.sha256()
    sources = [Path(__file__), Path(redaction_second_opinion.__file__), Path(text_folding.__file__)]
    sources += sorted(p for p in Path(pii.__file__).parent.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for library in ("phonenumbers", "detect-secrets", "mnemonic"):
        digest.update(f"{library}={metadata.version(library)}\0".encode())
    digest.update(f"unicode={unicodedata.unidata_version} python={sys.version_info[:2]}".encode())
    return digest.hexdigest()


class Redactor:
    """Replaces PII and secrets with typed placeholders. Stateless after construction; thread-safe.

    ``redact`` never raises on odd input (any ``str``); it only ever removes information.
    """

    def __init__(self, mode: RedactionMode = RedactionMode.THOROUGH, default_region: str = "US") -> None:
        self.mode = mode
        self._region = default_region
        extra: list[Callable[[str], Iterable[Hit]]] = [_phones(default_region, phonenumbers.Leniency.POSSIBLE)]
        if mode is RedactionMode.THOROUGH:
            extra.append(detect_secrets_hits)
        self._extra = tuple(extra)

    @functools.cached_property
    def fingerprint(self) -> str:
        """Equal for two redactors exactly when they remove the same things (module docstring)."""
        return f"{self.mode.value}-{self._region}-{_detectors_digest()[:32]}"

    def scan(self, text: str) -> tuple[Finding, ...]:
        """Find what would be redacted, as merged non-overlapping spans of the original text."""
        return tuple(Finding(kind, start, end, name) for start, end, kind, name, _ in _scan.find(text, self._extra))

    def redact(self, text: str) -> RedactionResult:
        if not text:  # empty fields are common (no subject, no summary): ~40 µs of detectors for nothing
            return RedactionResult(text, ())
        hits = _scan.find(text, self._extra)
        pieces: list[str] = []
        cursor = 0
        for start, end, _, _, replacement in hits:
            pieces += [text[cursor:start], replacement]
            cursor = end
        pieces.append(text[cursor:])
        findings = tuple(Finding(kind, start, end, name) for start, end, kind, name, _ in hits)
        return RedactionResult("".join(pieces), findings)
