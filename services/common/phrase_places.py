"""Phrases looked up among a text's words and paired by position: word lists in many languages, read cheaply.

A list of two hundred phrases in thirty languages as one alternation costs tens of microseconds a
sentence, and two such lists joined by ".{0,40}?" cost seconds on a text made of their words. Looked up
as words in a set keyed by the first word, then paired by where they stand (`within`), each list costs
one dictionary lookup per word. Chinese, Japanese, Korean and Thai write no spaces between words, so
their phrases are matched inside the text, and only where such a script occurs (`UNSPACED_SCRIPT`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from services.common.text_folding import fold_for_matching

WORD = re.compile(r"\w+")
UNSPACED_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7af]")

#: Each phrase as the tuple of its folded words, keyed by its first word.
Phrases = dict[str, frozenset[tuple[str, ...]]]
#: A word of folded text, lower case, with its start and end in the text.
Word = tuple[str, int, int]
Span = tuple[int, int]


def phrases(words: Iterable[str]) -> Phrases:
    """Each phrase as the words folded text holds for it, in each case it may be written, by first word."""
    forms = {
        tuple(token.casefold() for token in WORD.findall(fold_for_matching(form)))
        for word in words
        for form in (word, word.capitalize(), word.upper())
    }
    forms.discard(())
    return {first: frozenset(form for form in forms if form[0] == first) for first in {form[0] for form in forms}}


def words_of(folded: str) -> list[Word]:
    return [(match.group().casefold(), match.start(), match.end()) for match in WORD.finditer(folded)]


def places(phrases: Phrases, words: list[Word]) -> list[Span]:
    """(start, end) of each phrase among ``words`` (folded words with their places in the text)."""
    found = []
    for index, (word, start, _) in enumerate(words):
        for phrase in phrases.get(word, ()):
            following = words[index : index + len(phrase)]
            if tuple(word for word, _, _ in following) == phrase:
                found.append((start, following[-1][2]))
    return found


def within(first: list[Span], then: list[Span], gap: int) -> bool:
    """Whether a place of ``then`` starts at most ``gap`` characters after a place of ``first`` ends."""
    starts = sorted(start for start, _ in then)
    for _, end in first:
        following = bisect.bisect_left(starts, end)
        if following < len(starts) and starts[following] - end <= gap:
            return True
    return False


def near(one: list[Span], other: list[Span], gap: int) -> bool:
    """Whether a place of either list starts at most ``gap`` characters after one of the other ends."""
    return within(one, other, gap) or within(other, one, gap)
