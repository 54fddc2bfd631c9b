"""Password words in scripts the Latin stems cannot read: Arabic, Persian, Hebrew, Greek, Cyrillic
beyond Russian, Devanagari, Bengali, Tamil, Thai, Georgian, Armenian.

`credentials` reads words written in Latin letters (and, folded, Russian and the CJK scripts). Mail
in these scripts says "كلمة المرور: Nile2026!" or "הסיסמה שלי היא Yarden2026" just as often; the
value is nearly always in Latin letters, after a colon or after the language's own "is", which we
cannot list for every language. So the value is the linked one when a colon or "=" links it, or else
the first token in the same clause shaped like a password (letters with digits or symbols).

Runs only on text that is not ASCII, so ordinary mail pays one `isascii` call. Words are matched as
substrings of the folded, lower-cased text: Hebrew and Arabic glue articles and prepositions to the
front of a word ("הסיסמה", "بكلمة المرور"), and Thai writes no spaces at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import TRAILING, VALUE, password_shaped, value_after
from services.common.text_folding import fold_words

_WORDS = (
    # Arabic: "the word of passage", "the secret word", "passage code"; Persian
    "كلمة المرور",
    "كلمة مرور",
    "كلمة السر",
    "كلمة سر",
    "رمز المرور",
    "رمز العبور",
    "كلمه عبور",
    "کلمه عبور",
    "رمز عبور",
    "گذرواژه",
    # Hebrew (both spellings)
    "סיסמה",
    "סיסמא",
    # Greek
    "κωδικός πρόσβασης",
    "κωδικός",
    "συνθηματικό",
    # Cyrillic other than Russian's "пароль" (Bulgarian, Macedonian, Serbian, Ukrainian, Kazakh)
    "парола",
    "лозинка",
    "гасло",
    "құпиясөз",
    "құпия сөз",
    # Devanagari, Bengali, Tamil, Thai, Georgian, Armenian
    "पासवर्ड",
    "कूटशब्द",
    "পাসওয়ার্ড",
    "கடவுச்சொல்",
    "รหัสผ่าน",
    "პაროლი",
    "գաղտնաբառ",
)
_PATTERN = re.compile("|".join(re.escape(fold_words(word)) for word in sorted(_WORDS, key=len, reverse=True)))
_CLAUSE_END = re.compile(r"[.!?\u3002\u061f\u0964](?:\s|$)|\n")
_CLAUSE_WINDOW = 60


def _shaped_in_clause(text: str, end: int) -> tuple[int, int] | None:
    """The first password-shaped token after `end` in the same clause: "... شلي היא Yarden2026"."""
    stop = _CLAUSE_END.search(text, end, end + _CLAUSE_WINDOW)
    limit = stop.start() if stop else min(len(text), end + _CLAUSE_WINDOW)
    for token in VALUE.finditer(text, end, limit):
        kept = token.group().rstrip(TRAILING)
        if password_shaped(kept) and not is_placeholder_at(text, token.start()):
            return token.start(), token.start() + len(kept)
    return None


def password_words(text: str, lower: str) -> Iterator[Hit]:
    """Values stated for a password word written in one of these scripts."""
    if lower.isascii():
        return
    for m in _PATTERN.finditer(lower):
        span = value_after(text, lower, m.end(), FindingKind.PASSWORD) or _shaped_in_clause(text, m.end())
        if span:
            yield hit(*span, FindingKind.PASSWORD, "context:credential")
