"""One redaction component for the whole loop: serving (fast, on the request path) and worker (thorough).

memloop never persists raw content, so everything that leaves a request passes through here first.
PII and secrets are replaced by typed placeholders (``[PHONE]``, ``[PASSWORD]``...). E-mail
addresses keep their domain (``[EMAIL@partner.example]``): the domain carries provenance (who is
writing, where an instruction wants mail to go) and identifies an organisation, not a person.

Detection runs on a *folded* copy of the text (NFKC, zero-width characters removed, common
Cyrillic/Greek homoglyphs mapped to Latin) so that "password" spelt with a Cyrillic
"a" is still a password statement; replacements are applied to the original text through an index map.

Modes:

* ``FAST`` — compiled regexes plus ``phonenumbers`` on digit runs only. Cheap enough for the
  serving path (a 2 KB e-mail in well under a millisecond).
* ``THOROUGH`` — adds detect-secrets' regex plugins, its keyword detector, a high-entropy token
  check and looser phone matching. Used by the worker, which is off the request path.

Redaction is idempotent: placeholders are never matched again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, partial
from typing import Any

import phonenumbers

from services.common.text_folding import fold_for_matching as fold_for_matching
from services.common.text_folding import fold_with_map


class RedactionMode(StrEnum):
    FAST = "fast"
    THOROUGH = "thorough"


class FindingKind(StrEnum):
    """What was found; the placeholder is derived from it. Order here is merge priority."""

    PASSWORD = "password"
    SECRET = "secret"
    CARD = "card"
    IBAN = "iban"
    GOV_ID = "gov_id"
    PHONE = "phone"
    EMAIL = "email"
    ADDRESS = "address"

    @property
    def placeholder(self) -> str:
        return f"[{self.value.upper()}]"


#: Kinds whose presence makes content secret (never to be remembered, even redacted in context).
SECRET_KINDS: frozenset[FindingKind] = frozenset({FindingKind.SECRET, FindingKind.PASSWORD})
#: Kinds that policy treats as "a secret pattern survived redaction" when found in a candidate.
_LAST_LINE_KINDS = SECRET_KINDS | {FindingKind.CARD, FindingKind.IBAN, FindingKind.GOV_ID}
_PRIORITY = {kind: rank for rank, kind in enumerate(FindingKind)}


@dataclass(frozen=True)
class Finding:
    """One redacted span, as offsets into the original text. Never carries the value itself."""

    kind: FindingKind
    start: int
    end: int
    detector: str


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


# --- folding (one module for the whole loop) -------------------------------------------------

_fold_with_map = fold_with_map


# --- detectors: each yields (start, end, kind, detector, replacement) in folded coordinates ---

_Hit = tuple[int, int, FindingKind, str, str]
_Detector = Callable[[str], Iterable[_Hit]]

_PLACEHOLDER = re.compile(r"\[(?:" + "|".join(k.value.upper() for k in FindingKind) + r")(?:@[^\]\s]*)?\]")
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9._%+\-]{1,64}$")
_EMAIL_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)+")
# Each token format starts with a literal, which lets the regex engine skip ahead with a fast search;
# one alternation of them all would be several times slower.
_TOKEN_FORMAT_SOURCE = r"""
    AKIA[0-9A-Z]{16} ASIA[0-9A-Z]{16} AGPA[0-9A-Z]{16} AIDA[0-9A-Z]{16} AROA[0-9A-Z]{16}
    gh[pousr]_[A-Za-z0-9]{36,} github_pat_\w{22,} glpat-[\w\-]{20,} xox[abposr]-[\w\-]{10,}
    sk_(?:live|test)_[0-9A-Za-z]{16,} rk_(?:live|test)_[0-9A-Za-z]{16,} sk-[A-Za-z0-9_\-]{20,}
    AIza[0-9A-Za-z_\-]{35} npm_[A-Za-z0-9]{36} pypi-AgE[\w\-]{50,}
"""
_TOKEN_FORMATS = tuple(re.compile(pattern) for pattern in _TOKEN_FORMAT_SOURCE.split())
_LITERAL_SECRETS = (
    re.compile(r"eyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]*"),  # JWT
    re.compile(
        r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S
    ),
    re.compile(r"(?<=://)[^\s:/@]+:[^\s@/]+(?=@)"),  # credentials in a URL
    re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/\-]{20,}=*"),
)
_KEYWORD_SECRET = re.compile(
    r"\b(?:api[_ \-]?key|secret(?:[_ \-]?key)?|(?:access|auth|refresh|bearer)[_ \-]?token|token"
    r"|client[_ \-]?secret|private[_ \-]?key)\b\s*(?:is|=|:|was)\s*[\"']?(?P<value>[^\s\"']{6,})",
    re.IGNORECASE,
)
_PASSWORD = re.compile(
    r"\b(?:pass(?:word|wd|code|phrase)|pwd|pin(?:[ \-]?code)?)s?\b"
    r"(?:\s+(?:for|of|to|on)\s+(?:[\w.@\-]+\s+){0,3}?)?"
    r"(?P<link>\s*(?:is\s+now|is|was|=|:|->|will\s+be|changed\s+to|set\s+to)\s*|\s+)"
    r"[\"'“]?(?P<value>\S+)",
    re.IGNORECASE,
)
# A passphrase has spaces: it runs to the end of the sentence.
_PASSPHRASE = re.compile(
    r"\b(?:pass ?phrase|recovery phrase|seed phrase|mnemonic)s?\b\s*(?:is|was|=|:)\s*(?P<value>[^.\n]+)", re.I
)
# Patterns start with a character class (no look-behind, no \b) so the engine can skip ahead fast;
# boundaries are checked in code.
_CARD = re.compile(r"\d(?:[ \-]?\d){12,18}")
_IBAN = re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?")
_SSN = re.compile(r"\d\d\d([\- ])\d\d\1\d{4}")
_GOV_ID_LABELLED = re.compile(
    r"\b(?:ssn|social security(?: number| no\.?)?|passport(?: number| no\.?)?|national insurance(?: number)?"
    r"|nino|tax id|tin)\s*(?:is|:|#|=)?\s*(?P<value>[A-Z0-9][A-Z0-9 \-]{5,14}[A-Z0-9])\b",
    re.IGNORECASE,
)
_UK_NINO = re.compile(r"\b[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_ADDRESS = re.compile(
    r"\d\d{0,4}(?:\s+[A-Z][A-Za-z]+){1,4}\s+(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr"
    r"|Court|Ct|Way|Place|Pl|Terrace|Square|Sq|Parkway|Pkwy|Highway|Hwy)\b\.?"
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl)\.?\s*#?\s*\w+)?",
)
_PO_BOX = re.compile(r"P\.?\s?O\.?\s+Box\s+\d+", re.IGNORECASE)
_PHONE_HINT = re.compile(r"[+(\d][\d\s().\-]{6,21}\d")
_ENTROPY_TOKEN = re.compile(r"(?<![\w+/=\-])[A-Za-z0-9+/=_\-]{20,}")
_HEX_TOKEN = re.compile(r"\b[0-9a-fA-F]{32,}\b")


def _is_placeholder_at(text: str, start: int) -> bool:
    return _PLACEHOLDER.match(text, start) is not None


def _luhn_ok(digits: str) -> bool:
    values = [int(c) for c in reversed(digits)]
    doubled = [v * 2 - 9 if v > 4 else v * 2 for v in values[1::2]]
    return (sum(values[0::2]) + sum(doubled)) % 10 == 0


def _iban_ok(compact: str) -> bool:
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _bounded(text: str, start: int, end: int) -> bool:
    """A number stands alone: not glued to a word or a longer digit run on either side."""
    before, after = text[start - 1 : start] if start else "", text[end : end + 1]
    return not (before.isalnum() or before == "-" or after.isdigit())


def _emails(text: str) -> Iterator[_Hit]:
    at = text.find("@")
    while at != -1:
        local = _EMAIL_LOCAL.search(text, max(0, at - 64), at)
        domain = _EMAIL_DOMAIN.match(text, at + 1)
        if local and domain:
            start = local.start()
            if start == 0 or text[start - 1] != "[":
                replacement = f"[EMAIL@{domain.group().lower()}]"
                yield start, domain.end(), FindingKind.EMAIL, "regex:email", replacement
        at = text.find("@", at + 1)


def _tokens(text: str) -> Iterator[_Hit]:
    for regex in _TOKEN_FORMATS:
        for m in regex.finditer(text):
            if m.start() == 0 or not text[m.start() - 1].isalnum():
                yield m.start(), m.end(), FindingKind.SECRET, "regex:token", "[SECRET]"
    for regex in _LITERAL_SECRETS:
        for m in regex.finditer(text):
            yield m.start(), m.end(), FindingKind.SECRET, "regex:token", "[SECRET]"
    lower = text.lower()
    if "key" in lower or "secret" in lower or "token" in lower:
        for m in _KEYWORD_SECRET.finditer(text):
            value = m.group("value")
            credential = any(c.isdigit() for c in value) or len(value) >= 12
            if credential and not _is_placeholder_at(text, m.start("value")):
                yield m.start("value"), m.end(), FindingKind.SECRET, "regex:keyword", "[SECRET]"


def _passwords(text: str) -> Iterator[_Hit]:
    lower = text.lower()
    statements = _PASSWORD.finditer(text) if "pass" in lower or "pwd" in lower or "pin" in lower else ()
    for m in statements:
        value = m.group("value")
        if _is_placeholder_at(text, m.start("value")):
            continue
        if not m.group("link").strip() and value.isalpha():
            continue  # "password reset", "pin the message": no credential stated
        kept = value.rstrip(".,;:)\"'”") or value  # trailing punctuation ends the sentence
        yield m.start("value"), m.start("value") + len(kept), FindingKind.PASSWORD, "regex:password", "[PASSWORD]"
    if "phrase" in lower or "mnemonic" in lower:
        for m in _PASSPHRASE.finditer(text):
            if not _is_placeholder_at(text, m.start("value")):
                yield m.start("value"), m.end("value"), FindingKind.PASSWORD, "regex:passphrase", "[PASSWORD]"


def _cards(text: str) -> Iterator[_Hit]:
    for m in _CARD.finditer(text):
        digits = m.group().replace(" ", "").replace("-", "")
        if _bounded(text, m.start(), m.end()) and _luhn_ok(digits):
            yield m.start(), m.end(), FindingKind.CARD, "regex:card+luhn", "[CARD]"


def _ibans(text: str) -> Iterator[_Hit]:
    for m in _IBAN.finditer(text):
        if m.start() and text[m.start() - 1].isalnum():
            continue
        raw = m.group()
        # The greedy match may swallow a following upper-case token: try shorter endings too.
        for cut in range(len(raw), 14, -1):
            candidate = raw[:cut].rstrip()
            if _iban_ok(candidate.replace(" ", "")):
                yield m.start(), m.start() + len(candidate), FindingKind.IBAN, "regex:iban+mod97", "[IBAN]"
                break


def _gov_ids(text: str, labelled: bool) -> Iterator[_Hit]:
    for m in _SSN.finditer(text):
        area, group, serial = m.group()[:3], m.group()[4:6], m.group()[7:]
        valid = area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
        if valid and _bounded(text, m.start(), m.end()):
            yield m.start(), m.end(), FindingKind.GOV_ID, "regex:ssn", "[GOV_ID]"
    if labelled:
        for m in _GOV_ID_LABELLED.finditer(text):
            if any(c.isdigit() for c in m.group("value")):
                yield m.start("value"), m.end(), FindingKind.GOV_ID, "regex:gov-id-labelled", "[GOV_ID]"
        for m in _UK_NINO.finditer(text):
            yield m.start(), m.end(), FindingKind.GOV_ID, "regex:uk-nino", "[GOV_ID]"


def _addresses(text: str) -> Iterator[_Hit]:
    for m in _ADDRESS.finditer(text):
        if not m.start() or not text[m.start() - 1].isalnum():
            yield m.start(), m.end(), FindingKind.ADDRESS, "regex:address", "[ADDRESS]"
    if "box" in text.lower():
        for m in _PO_BOX.finditer(text):
            yield m.start(), m.end(), FindingKind.ADDRESS, "regex:po-box", "[ADDRESS]"


def _phones(text: str, region: str, leniency: Any) -> Iterator[_Hit]:
    # phonenumbers is thorough but costs ~0.1 ms per KB; run it only around digit runs.
    for hint in _PHONE_HINT.finditer(text):
        if sum(c.isdigit() for c in hint.group()) < 7:
            continue
        lo = max(0, hint.start() - 24)
        window = text[lo : min(len(text), hint.end() + 24)]
        for match in phonenumbers.PhoneNumberMatcher(window, region, leniency=leniency):
            start, end = lo + match.start, lo + match.end
            if start < hint.end() and end > hint.start():
                yield start, end, FindingKind.PHONE, "phonenumbers", "[PHONE]"


@cache
def _detect_secrets_patterns() -> tuple[tuple[str, re.Pattern[str], int], ...]:
    """detect-secrets' regex plugins and keyword detector, used directly (no baseline, no settings).

    Going through the plugins' compiled patterns rather than ``scan_line`` keeps the global
    settings singleton untouched, never triggers a plugin's network ``verify()``, and gives
    spans rather than bare values. Imported lazily: serving never pays for it.
    """
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    skip = {"Public IP (ipv4)"}  # an IP address is not a secret and breaks meeting text
    patterns: list[tuple[str, re.Pattern[str], int]] = []
    plugin_classes: dict[str, Any] = get_mapping_from_secret_type_to_class()  # typed with an unbound TypeVar
    for secret_type, plugin_class in plugin_classes.items():
        if secret_type not in skip and issubclass(plugin_class, RegexBasedDetector):
            patterns += [(secret_type, regex, 0) for regex in plugin_class().denylist]
    for regex, group in keyword.CONFIG_DENYLIST_REGEX_TO_GROUP.items():
        patterns.append(("Secret Keyword", regex, group))
    return tuple(patterns)


def _detect_secrets_hits(text: str) -> Iterator[_Hit]:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    placeholders = [range(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]
    for secret_type, regex, group in _detect_secrets_patterns():
        for m in regex.finditer(text):
            value = m.group(group) or ""
            start = m.start(group) + len(value) - len(value.lstrip())
            keyword_is_placeholder = any(m.start() in span or m.start() + 1 in span for span in placeholders)
            if value.strip() and not keyword_is_placeholder and not _is_placeholder_at(text, start):
                # Config-file patterns take the rest of the line; in prose the value is one token.
                token = value.split()[0].rstrip(".,;:)\"'") or value.split()[0]
                yield start, start + len(token), FindingKind.SECRET, f"detect-secrets:{secret_type}", "[SECRET]"
    b64, hexa = Base64HighEntropyString(), HexHighEntropyString()
    for m in _ENTROPY_TOKEN.finditer(text):
        token = m.group()
        has_both = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if has_both and b64.calculate_shannon_entropy(token) > 4.0:
            yield m.start(), m.end(), FindingKind.SECRET, "detect-secrets:entropy-b64", "[SECRET]"
    for m in _HEX_TOKEN.finditer(text):
        if hexa.calculate_shannon_entropy(m.group()) > 3.0:
            yield m.start(), m.end(), FindingKind.SECRET, "detect-secrets:entropy-hex", "[SECRET]"


def _detectors(mode: RedactionMode, region: str) -> tuple[_Detector, ...]:
    thorough = mode is RedactionMode.THOROUGH
    leniency = phonenumbers.Leniency.POSSIBLE if thorough else phonenumbers.Leniency.VALID
    gov_ids: _Detector = partial(_gov_ids, labelled=thorough)
    phones: _Detector = partial(_phones, region=region, leniency=leniency)
    base = (_tokens, _passwords, _cards, _ibans, gov_ids, _emails, _addresses, phones)
    return (*base, _detect_secrets_hits) if thorough else base


# --- the component ---------------------------------------------------------------------------


class Redactor:
    """Replaces PII and secrets with typed placeholders. Stateless after construction; thread-safe.

    ``redact`` never raises on odd input (any ``str``); it only ever removes information.
    """

    def __init__(self, mode: RedactionMode = RedactionMode.FAST, default_region: str = "US") -> None:
        self.mode = mode
        self._detectors = _detectors(mode, default_region)

    def scan(self, text: str) -> tuple[Finding, ...]:
        """Find what would be redacted, as merged non-overlapping spans of the original text."""
        return tuple(Finding(kind, start, end, name) for start, end, kind, name, _ in self._hits(text))

    def redact(self, text: str) -> RedactionResult:
        hits = self._hits(text)
        pieces: list[str] = []
        cursor = 0
        for start, end, _, _, replacement in hits:
            pieces += [text[cursor:start], replacement]
            cursor = end
        pieces.append(text[cursor:])
        findings = tuple(Finding(kind, start, end, name) for start, end, kind, name, _ in hits)
        return RedactionResult("".join(pieces), findings)

    def _hits(self, text: str) -> list[_Hit]:
        folded, origin = _fold_with_map(text)
        raw: list[_Hit] = []
        for detector in self._detectors:
            for start, end, kind, name, replacement in detector(folded):
                if end > start:
                    raw.append((origin[start], origin[end - 1] + 1, kind, name, replacement))
        return _merge(raw)


def _merge(hits: list[_Hit]) -> list[_Hit]:
    """Union overlapping spans; the union takes the highest-priority kind (secrets first).

    A union wider than the winning hit gets the kind's bare placeholder (an e-mail merged with
    something else loses its domain rather than keep text the other detector wanted gone).
    """
    merged: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h[0], -h[1])):
        if not merged or hit[0] >= merged[-1][1]:
            merged.append(hit)
            continue
        last = merged[-1]
        best = last if _PRIORITY[last[2]] <= _PRIORITY[hit[2]] else hit
        start, end = last[0], max(last[1], hit[1])
        replacement = best[4] if (start, end) == (best[0], best[1]) else best[2].placeholder
        merged[-1] = (start, end, best[2], best[3], replacement)
    return merged


_FAST = Redactor(RedactionMode.FAST)
_SECRET_PLACEHOLDER = re.compile(r"\[(?:SECRET|PASSWORD)\]")


def contains_secret_pattern(text: str) -> bool:
    """Policy's last line: does a secret, password, card, IBAN or government id survive in ``text``?

    Look-alike and zero-width tricks are folded first. Placeholders do not count.
    """
    return any(f.kind in _LAST_LINE_KINDS for f in _FAST.scan(text))


def contains_secret_placeholder(text: str) -> bool:
    """Whether ``text`` sits where a secret was: the context of a secret is not to be remembered."""
    return _SECRET_PLACEHOLDER.search(fold_for_matching(text)) is not None
