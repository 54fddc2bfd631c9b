"""One way to fold text before matching it: the only home of memloop's confusables table.

Redaction, the never-suppress guard, policy's rules and the extractor all match patterns against
text that an attacker (or a careless paste) may have disguised: "p\u0430ssword" with a Cyrillic
"\u0430", "pass\u200bword" with a zero-width space, fullwidth or mathematical letters, strike-through
combining marks. They must all see the same folded text, or one of them can be dodged by a trick the
others catch (two hand-kept tables once drifted apart). Standard library only, so any domain package
may import it.

Folding, character by character (so callers can map folded offsets back to the original):

1. a Unicode tag character becomes the ASCII character it mirrors; otherwise
   the confusables table below, for a character it names; otherwise
   NFKC (fullwidth, mathematical, ligatures, superscripts, non-breaking spaces);
2. decomposition (NFD) and removal of every combining mark, format character (zero-width, bidi,
   soft hyphen) and other invisible character;
3. the confusables table again: Cyrillic, Greek, Armenian, Cherokee, Latin small capitals, letters in
   negative circles, negative squares and regional indicators, and other letters that look like a Latin
   letter become that letter (case kept: some patterns need it);

repeated until the character no longer changes, so folding is idempotent. Folded text is for
matching only: nothing stores it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

# Escaped on purpose: the look-alikes are invisible in review. Each group is (look-alikes, Latin letters),
# position by position.
_CONFUSABLE_GROUPS: tuple[tuple[str, str], ...] = (
    # Cyrillic lower case
    (
        "\u0430\u0432\u0435\u0451\u0433\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0455\u0456\u0457"
        "\u0458\u0501\u04bb\u04cf\u051b\u051d\u04af\u0491\u04e9\u0475\u044c\u0461",
        "abeerkmhopctyxsiijdhlqwyrovbw",
    ),
    # Cyrillic upper case
    (
        "\u0410\u0412\u0415\u0401\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405\u0406\u0407\u0408"
        "\u0500\u04c0\u04ae\u051a\u051c\u0417\u0474",
        "ABEEKMHOPCTYXSIIJDIYQW3V",
    ),
    # Greek lower case
    (
        "\u03b1\u03b2\u03b3\u03b5\u03b7\u03b9\u03ba\u03bc\u03bd\u03bf\u03c1\u03c2\u03c4\u03c5\u03c7\u03c9\u03f2"
        "\u03f3\u03c3",
        "abyenikuvopstuxwcjo",
    ),
    # Greek upper case
    (
        "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03f9\u037f",
        "ABEZHIKMNOPTYXCJ",
    ),
    # Latin letters that pass for others: dotless i and j, script g, alpha, long-leg r, small capitals
    (
        "\u0131\u0237\u0261\u0251\u027e\u1d00\u0299\u1d04\u1d05\u1d07\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d"
        "\u0274\u1d0f\u1d18\u0280\u1d1b\u1d1c\u1d20\u1d21\u028f\u1d22\u0138",
        "ijgarabcdeghijklmnoprtuvwyzk",
    ),
    # Armenian
    ("\u0585\u057d\u0570\u0578\u0581\u0566\u0561\u0575\u0533\u054f\u0555", "ouhngqajGSO"),
    # Cherokee capitals
    (
        "\u13aa\u13f4\u13df\u13a0\u13ac\u13c0\u13bb\u13a5\u13e7\u13e6\u13b7\u13c3\u13be\u13e2\u13da\u13a2\u13d9\u13b3\u13bd",
        "ABCDEGHIJKMNOPSTVWY",
    ),
)


# Letters drawn in boxes that Unicode gives no decomposition (NFKC turns the plain squared ones into letters):
# negative circled, negative squared and regional-indicator letters, "🅵🆁🅾🅼 🅽🅾🆆 🅾🅽".
_BOXED_LETTER_RUNS = (0x1F150, 0x1F170, 0x1F1E6)


def _confusables() -> dict[str, str]:
    table: dict[str, str] = {chr(first + i): chr(ord("A") + i) for first in _BOXED_LETTER_RUNS for i in range(26)}
    for source, target in _CONFUSABLE_GROUPS:
        if len(source) != len(target):
            raise ValueError(f"confusables group of unequal length: {source!r}")
        table.update(zip(source, target, strict=True))
    return table


#: Every look-alike letter and the Latin letter it is folded onto (read-only by convention).
CONFUSABLES: dict[str, str] = _confusables()

_INVISIBLE_CATEGORIES = frozenset({"Mn", "Me", "Cf"})
# Blank but not whitespace, and not in the categories above: Hangul fillers, braille blank, Mongolian vowel
# separator; and Arabic's tatweel, which only stretches a word ("تجـــاهل" is "تجاهل").
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u034f\u0640")
_TRANSLATE = str.maketrans(CONFUSABLES)
# Unicode tag characters U+E0020..U+E007E mirror printable ASCII: invisible on screen, read by models
# ("ASCII smuggling"). Folded onto the letters they stand for, so a password or an instruction written
# in them is seen by every pattern; U+E007F (cancel tag), a format character, is dropped as invisible.
_TAG_OFFSET = 0xE0000
_TAG_FIRST, _TAG_LAST = chr(_TAG_OFFSET + 0x20), chr(_TAG_OFFSET + 0x7E)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _is_invisible(ch: str) -> bool:
    return ch in _INVISIBLE_EXTRA or unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def _fold_step(ch: str) -> str:
    if _TAG_FIRST <= ch <= _TAG_LAST:  # a tag character spells its ASCII letter invisibly: read it as one
        return chr(ord(ch) - _TAG_OFFSET)
    if ch in CONFUSABLES:  # before NFKC, which would turn some (lunate sigma) into another letter first
        return CONFUSABLES[ch]
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", ch))
    return "".join(c for c in decomposed if not _is_invisible(c)).translate(_TRANSLATE)


@lru_cache(maxsize=8192)
def fold_char(ch: str) -> str:
    """The folded form of one character (possibly empty, possibly several characters); a fixed point."""
    current = ch
    for _ in range(8):
        folded = "".join(_fold_step(c) for c in current)
        if folded == current:
            return folded
        current = folded
    return current  # pragma: no cover - no Unicode character needs more than a few steps


def fold_for_matching(text: str) -> str:
    """Fold `text` so look-alike and invisible-character tricks cannot dodge a pattern. Idempotent.

    ASCII text is returned as it is (nothing to fold), which keeps the common case free.
    """
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else fold_char(ch) for ch in text)


def fold_with_map(text: str) -> tuple[str, Sequence[int]]:
    """Fold `text` and give, for every folded character, the index of the original it came from.

    Detectors match the folded text; redaction replaces the original span the map points to.
    """
    if text.isascii():
        return text, range(len(text))
    parts: list[str] = []
    origin: list[int] = []
    cursor = 0
    for match in _NON_ASCII.finditer(text):  # ASCII runs are copied whole; only the rest is folded
        index = match.start()
        parts.append(text[cursor:index])
        origin.extend(range(cursor, index))
        folded = fold_char(text[index])
        parts.append(folded)
        origin.extend([index] * len(folded))
        cursor = index + 1
    parts.append(text[cursor:])
    origin.extend(range(cursor, len(text)))
    return "".join(parts), origin


def fold_words(text: str) -> str:
    """Folded and case-folded: for matching words whatever their case (the never-suppress guard, policy).

    Folded again after case folding, since lower-casing can itself produce foldable characters
    ("\u0130" becomes "i" and a combining dot).
    """
    return fold_for_matching(fold_for_matching(text).casefold())


#: Letters folding leaves as they are, having no accent to drop ("ł" is a letter of its own, not "l"
#: with a mark), mapped to what a reader of word lists expects: Polish "członek", Danish "ø".
#: For readers of words (special categories, policy's egress), not for the detectors' folding.
PLAIN_LETTERS = str.maketrans({"\u0142": "l", "\u00f8": "o", "\u0111": "d", "\u00e6": "ae", "\u0153": "oe"})
