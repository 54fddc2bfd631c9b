"""Values read out rather than typed: digits written as words, and letters spelt one at a time.

A voicemail transcript, a dictated note or a chat written to dodge a filter gives the same value
in words: "the PIN is seven three one six", "call me back at four one five, five five five, one two
one two", "Email me at a l i c e @ example . com", "the wifi password is capital T, r, o, u, t".
Each is the value itself, so each is redacted like the digits would be (the address, by
`contact.letter_spaced_emails`).

Words for digits are ordinary words ("one of three", "press one for sales"), so a run of them is
read only right after a label that says what it is (a code, a PIN, a phone number, an account),
and only when the run is as long as such a value: four digits for a code, seven for a phone
number. Counting ("one two three four, breathe out") has no label. A text is read for labels only
when its words hold two digit words in a row, or three different single characters, which few do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.credential_words import DIGIT_NAMES
from services.common.pii.model import FindingKind, Hit, after_words, hit

_DIGIT = rf"(?:{'|'.join(DIGIT_NAMES)})(?![a-z])"
# A lock's combination is read in numbers, not digits ("twelve, thirty-four, fifty-six"): each word counts as
# the one digit it is at least, so such a run must still be as long as a code to be one.
_TENS = (
    r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty"
    r"|fifty|sixty|seventy|eighty|ninety)(?![a-z])"
)
_REPEAT = r"(?:(?:double|triple)[\s\-]+)"
_JOIN = r"(?:\s*,\s*|\s+|\s*-\s*)(?:and\s+)?"
# One unit of a value read out: a digit word ("double-oh", "nine hundred"), or a few typed digits
# among the words ("four 4 one 9", "7 three 1 six": written half and half to slip past a filter).
_UNIT = rf"(?:{_REPEAT}?{_DIGIT}(?:[\s\-]+(?:hundred|thousand)(?![a-z]))?|{_TENS}|\d{{1,4}}(?![\w]))"
_RUN = rf"{_UNIT}(?:{_JOIN}{_UNIT}){{0,40}}"
_A_DIGIT_WORD = re.compile(_DIGIT)
# Letters and digits one at a time, each maybe named upper or lower case ("capital T, r, o, u, t").
_CASE = r"(?:(?:capital|upper\s*case|uppercase|lower\s*case|lowercase|small|big)\s+)"
_ONE = r"[a-z0-9](?![a-z0-9])"
_LETTERS = rf"{_CASE}?{_ONE}(?:(?:\s*,\s*|\s+|-|\.){_CASE}?{_ONE}){{3,64}}"

# Between the label and the value: a few words at most ("code to the lockbox is", "me back at").
_BETWEEN = r"(?:[^\S\n]+(?:[a-z']{1,16}|[:=\-])){0,6}?(?:\s*[:=\-])?[^\S\n]*"
_SPOKEN_AFTER = re.compile(rf"(?P<between>{_BETWEEN})(?P<value>{_RUN})")
_SPELT_AFTER = re.compile(rf"{_BETWEEN}(?P<value>{_LETTERS})")
_MAX_BETWEEN = 32  # characters: "at the back of the house is" is a sentence, not a label's link

# Label, the kind its value is, and how many digits make one.
_CODE = ("code", "combination", "combo", "clave", "codigo", "codice", "kod")
_PASSWORD = (
    "password", "passwort", "mot de passe", "contrasena", "pw", "passphrase", "wifi key", "wlan-schlussel", "pin",
    "passcode", "geheimzahl",
)  # fmt: skip
_PHONE = (
    "phone", "number", "mobile", "cell", "call me", "reach me", "text me", "ring me", "call back", "get me",
    "contact me", "whatsapp me", "get hold of me", "reach her", "reach him", "call her", "call him",
    "telefon", "telefono", "numero", "handy", "whatsapp", "landline", "extension",
)  # fmt: skip
_ACCOUNT = ("account number", "account no", "routing number", "sort code", "kontonummer")
_GOV_ID = ("social", "ssn", "social security", "national insurance", "passport", "tax id")
_CARD_CODE = ("cvv", "cvc", "cvv2", "cvc2", "csc", "card security code", "card verification")  # three digits
_LABELS: tuple[tuple[tuple[str, ...], FindingKind, int], ...] = (
    (_CODE, FindingKind.SECRET, 4),
    (_PASSWORD, FindingKind.PASSWORD, 4),
    (_ACCOUNT, FindingKind.BANK_ACCOUNT, 6),
    (_GOV_ID, FindingKind.GOV_ID, 6),
    (_PHONE, FindingKind.PHONE, 7),
    (_CARD_CODE, FindingKind.PASSWORD, 3),
)
# A code that names a place or a phone's prefix is no secret ("zip code is nine oh two one oh"); a
# bank's sort code is an account's, read by its own label.
_NOT_A_SECRET_CODE = re.compile(r"(?:zip|postal|post|area|country|dial(?:l?ing)?|iso|sort)[\s\-]*code\Z")
_SPELLABLE = _CODE + _PASSWORD


_NOT_A_DIGIT = ("double", "triple", "and", "hundred", "thousand")


def _digits(run: str) -> int:
    words = re.findall(r"[a-z]+", run)
    return (
        sum(1 for w in words if w not in _NOT_A_DIGIT)
        + words.count("double")
        + 2 * words.count("triple")
        + 2 * words.count("hundred")
        + 3 * words.count("thousand")
        + sum(len(number) for number in re.findall(r"\d+", run))
    )


# What the gates look for in the text's words (commas and hyphens split them: "four-one", "t, r").
_DIGIT_WORDS = frozenset((*DIGIT_NAMES, "double", "triple", *re.findall(r"[a-z]+", _TENS)))
_NEXT_DIGIT = re.compile(rf"{_JOIN}{_UNIT}")
_SINGLE_CHARACTERS = frozenset("bcdefghjklmnopqrstuvwxyz0123456789")  # "a" and "i" are words


def _two_digit_words_in_a_row(lower: str, words: list[str]) -> bool:
    """Whether any digit word is followed by another: most texts have a few digit words, none in a row."""
    for word in _DIGIT_WORDS.intersection(words):
        at = lower.find(word)
        while at != -1:
            end = at + len(word)
            if (not at or not lower[at - 1].isalpha()) and _NEXT_DIGIT.match(lower, end):
                return True
            at = lower.find(word, end)
    return False


def spoken_values(text: str, lower: str) -> Iterator[Hit]:
    """Digit words after a label that names what they are, and letters spelt out after a password's.

    The labels are many (45 `str.find`s cost 80 µs per 2 KB mail), so they are looked for only when
    the text's words hold two digit words in a row, or three different single characters.
    """
    words = lower.replace(",", " ").replace("-", " ").split()
    if _two_digit_words_in_a_row(lower, words):
        yield from _spoken(lower)
    if len(_SINGLE_CHARACTERS.intersection(words)) >= 3:
        for m in after_words(lower, _SPELLABLE, _SPELT_AFTER):
            if m.start("value") - m.start() <= _MAX_BETWEEN:
                yield hit(m.start("value"), m.end("value"), FindingKind.PASSWORD, "spelt:password")


def _spoken(lower: str) -> Iterator[Hit]:
    for words, kind, digits in _LABELS:
        for m in after_words(lower, words, _SPOKEN_AFTER):
            if len(m.group("between")) > _MAX_BETWEEN or _digits(m.group("value")) < digits:
                continue
            if _A_DIGIT_WORD.search(m.group("value")) is None:
                continue  # typed digits alone are the other detectors' (phone numbers, PINs, accounts)
            if kind is FindingKind.SECRET and _NOT_A_SECRET_CODE.search(lower, max(0, m.start() - 24), m.start()):
                continue
            yield hit(m.start("value"), m.end("value"), kind, f"spoken:{kind.value}")
