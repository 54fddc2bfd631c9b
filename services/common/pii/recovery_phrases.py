"""Wallet recovery phrases: twelve or more words in a row from one of BIP-39's standard word lists.

A recovery phrase is the wallet itself: whoever reads it can take the funds, and no label has to
say what it is ("Backup of the Ledger — legal winner thank year wave sausage …"). People write
them numbered ("1. abandon 2. ability"), one per line, or with commas. Ordinary prose does not run
twelve words from one list: each list leaves out the short function words ("the", "of", "is",
"a") that a sentence cannot do without, so prose breaks a run within a few words (measured on the
corpus `tests/unit/test_redaction_recovery_phrases.py` names).

The lists are the standard's own, read from its reference implementation (the `mnemonic` package)
rather than copied here, for the languages written with spaces between words whose words fold to
plain letters (Chinese, Japanese and Korean phrases are not read). A shorter run is no phrase: a
wallet's smallest is twelve words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from mnemonic import Mnemonic

from services.common.pii.model import FindingKind, Hit, hit
from services.common.text_folding import fold_for_matching

_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish")
_SHORTEST_PHRASE = 12

# Between two words of a phrase: spaces, commas, a line break, a list's numbering ("1.", "(2)", "#3").
_GAP_CHARS = r"[\s,;:|/.()\[\]#\-\u2013\u2014\u00b7\u2022]"
# A run of twelve short words with such gaps: a C-speed sieve, so prose pays no Python per word. It
# opens with the mark before the run's first word (the text is read with a space before it), which
# lets the engine skip every letter at C speed; its repeats are possessive, so a word or a gap that
# failed is not re-split. A shorter run is consumed whole by the second branch, which captures
# nothing: its words are not tried again as the start of a run (prose cost three times as much).
_SHORT_WORD = rf"[a-z]{{3,9}}+{_GAP_CHARS}{{1,6}}+(?:\d{{1,2}}+{_GAP_CHARS}{{1,4}}+)?"
_RUN = re.compile(
    rf"[^a-z](?:(?P<run>(?:{_SHORT_WORD}){{{_SHORTEST_PHRASE - 1},}}[a-z]{{3,9}})(?![a-z])|(?:{_SHORT_WORD})+)"
)
_WORD = re.compile(r"[a-z]+")


@functools.cache
def _languages_of_words() -> dict[str, int]:
    """Each listed word, folded as the detectors read text, to a bit per language whose list has it."""
    languages: dict[str, int] = {}
    for bit, language in enumerate(_LANGUAGES):
        for word in Mnemonic(language).wordlist:
            folded = fold_for_matching(word).lower()
            languages[folded] = languages.get(folded, 0) | 1 << bit
    return languages


def recovery_phrases(_text: str, lower: str) -> Iterator[Hit]:
    """Every run of at least twelve words that all stand in one language's list."""
    if len(lower) < _SHORTEST_PHRASE * 4:
        return
    listed = _languages_of_words()
    padded = " " + lower
    if not any(_RUN.findall(padded)):  # the common case, without a match object per run
        return
    for run in _RUN.finditer(padded):
        if run.group("run") is None:
            continue
        first = last = -1
        count, common = 0, 0
        for word in _WORD.finditer(lower, run.start("run") - 1, run.end("run") - 1):
            languages = listed.get(word.group(), 0) & (common if count else -1)
            if languages:
                first, count, common = (word.start() if not count else first), count + 1, languages
                last = word.end()
                continue
            if count >= _SHORTEST_PHRASE:
                yield hit(first, last, FindingKind.SECRET, "shape:recovery-phrase")
            count, common = 0, 0
            if word.group() in listed:  # a word of another language's list starts a run of its own
                first, count, common, last = word.start(), 1, listed[word.group()], word.end()
        if count >= _SHORTEST_PHRASE:
            yield hit(first, last, FindingKind.SECRET, "shape:recovery-phrase")
