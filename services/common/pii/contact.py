"""E-mail addresses: replaced, but the domain is kept (it carries provenance, not a person).

Addresses spelt out to dodge scrapers ("bob (at) example (dot) com", "bob[at]example[dot]org",
"bob at example dot com") are addresses too; bracketed "at" and "dot" are unambiguous, the bare
words count only before a known top-level domain. So are addresses spelt a letter at a time ("a l i
c e @ example . com").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit

# Letters of any script count: internationalised addresses ("jane@例え.jp", "josé@correo.es") are
# addresses too (RFC 6531/IDNA); the kept domain is lower-cased like any other.
_EMAIL_LOCAL = re.compile(r"[\w.%+\-]{1,64}$")
_EMAIL_DOMAIN = re.compile(r"[^\W_](?:[\w\-]*[^\W_])?(?:\.[\w\-]+)+")


def _around_at_signs(
    text: str, local: re.Pattern[str], domain: re.Pattern[str], before: int
) -> Iterator[tuple[re.Match[str], re.Match[str]]]:
    """Each "@" with the local part ``local`` finds in the ``before`` characters before it, and the
    domain ``domain`` matches right after it."""
    at = text.find("@")
    while at != -1:
        found_local = local.search(text, max(0, at - before), at)
        found_domain = domain.match(text, at + 1)
        if found_local and found_domain:
            yield found_local, found_domain
        at = text.find("@", at + 1)


_NO_REPLY = re.compile(r"no-?reply|do-?not-?reply|mailer-daemon", re.I)


def emails(text: str) -> Iterator[Hit]:
    for local, domain in _around_at_signs(text, _EMAIL_LOCAL, _EMAIL_DOMAIN, 64):
        start = local.start()
        labels = domain.group().split(".")
        if labels[-1].isdigit() and len(labels) < 4:
            continue  # "bootstrap@5.3.3", "lodash@4.17.21": a package at its version
        if _NO_REPLY.search(local.group()) or domain.group().lower().endswith("users.noreply.github.com"):
            continue  # a robot's address that no one reads: it names no person
        if start == 0 or text[start - 1] != "[":
            replacement = f"[EMAIL@{domain.group().lower()}]"
            yield start, domain.end(), FindingKind.EMAIL, "email", replacement


# "a l i c e @ example . com", "a.l.i.c.e @ e x a m p l e . c o m": an address spelt with spaces.
_SPACED_LOCAL = re.compile(r"(?<![a-z0-9])(?:[a-z0-9][ .\-]){2,63}[a-z0-9][^\S\n]*\Z")
_PIECE = r"(?:(?:[a-z0-9] ){1,62}[a-z0-9](?![a-z0-9])|[a-z0-9][a-z0-9\-]{0,62})"
_SPACED_DOMAIN = re.compile(rf"[^\S\n]*(?P<domain>{_PIECE}(?:[^\S\n]*\.[^\S\n]*{_PIECE})+)(?![a-z0-9\-])")


def letter_spaced_emails(text: str, lower: str) -> Iterator[Hit]:
    """Addresses written with spaces between their letters or around "@" and the dots."""
    if "@" not in lower:
        return
    for local, domain in _around_at_signs(lower, _SPACED_LOCAL, _SPACED_DOMAIN, 130):
        if " " in local.group().strip() or " " in domain.group().strip():
            name = re.sub(r"\s+", "", domain.group("domain"))
            if re.fullmatch(_TLDS, name.rsplit(".", 1)[-1]):
                yield local.start(), domain.end(), FindingKind.EMAIL, "email:letter-spaced", f"[EMAIL@{name}]"


# "(at)", "[at]", "{at}", "<at>" or " at " between a local part and a domain whose dots are spelt out.
_OPEN, _CLOSE = r"[\[({<]", r"[\])}>]"
_SPELT_AT = rf"(?:\s*{_OPEN}\s*at\s*{_CLOSE}\s*|\s+at\s+)"
_SPELT_DOT = rf"(?:\s*{_OPEN}\s*dot\s*{_CLOSE}\s*|\s+dot\s+|\.)"
_TLDS = r"com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|ru|jp|cn|in|au|ca|us|me|info|biz|eu"
_SPELT_EMAIL = re.compile(
    rf"(?<![\w.+\-])(?P<local>[A-Za-z0-9._%+\-]{{1,64}}){_SPELT_AT}"
    rf"(?P<domain>[A-Za-z0-9\-]{{1,63}}(?:{_SPELT_DOT}[A-Za-z0-9\-]{{1,63}})*{_SPELT_DOT}(?P<tld>[A-Za-z]{{2,6}}))(?![\w\-])",
    re.I,
)
_SPELT_MARKERS = ("(at", "[at", " dot ")  # each costs a scan of the text: the common spellings only
_BRACKETED = re.compile(rf"{_OPEN}\s*(?:at|dot)\s*{_CLOSE}", re.I)
_SPELT_SEPARATOR = re.compile(rf"{_SPELT_DOT}", re.I)


# Words that start a phrase, not a domain: "look at this dot com bubble", "meet at noon dot com".
_NOT_A_DOMAIN = frozenset(
    {"this", "that", "the", "a", "an", "our", "my", "your", "his", "her", "their", "its", "noon", "home", "work"}
)


def _reads_as_spelt_address(text: str, m: re.Match[str]) -> bool:
    """Bare "at" and "dot" are ordinary words: the spelling must end the phrase and name a domain."""
    if " dot " not in m.group().lower():
        return False  # "meet at example.com" is a place to meet, not an address
    if m.group("domain").split()[0].lower() in _NOT_A_DOMAIN:
        return False
    rest = text[m.end() : m.end() + 2].lstrip(" ")
    return not rest or not rest[0].isalnum()


def spelt_out_emails(text: str, lower: str) -> Iterator[Hit]:
    """Addresses with "at" and "dot" written as words; the kept domain is written with its dots."""
    if not any(marker in lower for marker in _SPELT_MARKERS):
        return
    for m in _SPELT_EMAIL.finditer(text):
        spelt = m.group()
        if "@" in spelt:
            continue
        bracketed = _BRACKETED.search(spelt) is not None
        if not bracketed and not re.fullmatch(_TLDS, m.group("tld"), re.I):
            continue
        if not bracketed and not _reads_as_spelt_address(text, m):
            continue
        domain = _SPELT_SEPARATOR.sub(".", m.group("domain")).lower()
        yield _local_start(text, m.start()), m.end(), FindingKind.EMAIL, "email:spelt", f"[EMAIL@{domain}]"


# A local part's dot spelt out too: "alice dot smith at gmail dot com" (the pattern's local part has no spaces).
_SPELT_LOCAL_PIECE = re.compile(
    rf"(?<![\w.+\-])[A-Za-z0-9._%+\-]{{1,64}}(?:\s+dot\s+|\s*{_OPEN}\s*dot\s*{_CLOSE}\s*)\Z", re.I
)


def _local_start(text: str, start: int) -> int:
    for _ in range(4):  # "first dot middle dot last at …" at most
        piece = _SPELT_LOCAL_PIECE.search(text, max(0, start - 80), start)
        if piece is None:
            break
        start = piece.start()
    return start
