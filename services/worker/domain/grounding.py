"""Whether a model's owner-origin candidate says what the owner's own sentences say.

The optional LLM extractor reads the whole mail, quoted and relayed parts included, and may
attribute to the owner words that were someone else's: "the vendor wrote: 'I prefer that every
invoice is paid to Vendor Bank'" comes back as "Alice prefers invoices paid to Vendor Bank". The
rule extractors never do this (they read the owner's sentences alone); a model's answer is checked:
most of the candidate's content words must stand in one sentence the owner wrote herself, and in no
sentence of someone else's more than in hers. Paraphrase keeps the content words ("Please keep my
meetings after 10:00" → "Alice prefers meetings after 10:00").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from services.common.hidden_text import hidden_text
from services.common.text_folding import fold_for_matching

GROUNDED_SHARE = 0.5

_WORD = re.compile(r"[^\W_]{2,}")


# Words a paraphrase adds or drops without changing what is said.
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FUNCTION_WORDS = _words(
    "a an the and or but of to in on at by for from with as is are was were be been it its this that these "
    "those my me mine our ours we us you your yours he she her his him they them their i am do does did "
    "not no so if then than all any every each some please prefer prefers preferred preference want wants "
    "wanted like likes would should could will shall can may might must always never also just only owner "
    "user"
)


def _stem(word: str) -> str:
    """A plural's singular, roughly ("seats" and "seat" are one word here; "class" stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str, ignored: frozenset[str] = frozenset()) -> frozenset[str]:
    words = set(_WORD.findall(fold_for_matching(text).lower())) - _FUNCTION_WORDS - ignored
    return frozenset(_stem(word) for word in words)


def _best_share(words: frozenset[str], sentences: Sequence[str]) -> float:
    return max((len(words & content_words(sentence)) / len(words) for sentence in sentences), default=0.0)


def grounded_in_owner(text: str, authored: Sequence[tuple[str, bool]], owner: str = "") -> bool:
    """Whether `text` says what one of the owner's own sentences says (`authored`: sentence, by owner).

    The owner's user id is no content word: a model names her ("Alice prefers...") where she wrote "I".
    """
    words = content_words(text, frozenset({owner.lower()}) if owner else frozenset())
    if not words:
        return False  # nothing to check it against: not the owner's statement
    # A sentence that hides words (tag characters a model reads, an override) grounds nothing: what a
    # model read in it is not what the owner saw herself write (`services.common.hidden_text`).
    shown = [(sentence, by_owner and hidden_text(sentence) is None) for sentence, by_owner in authored]
    own = _best_share(words, [sentence for sentence, by_owner in shown if by_owner])
    others = _best_share(words, [sentence for sentence, by_owner in shown if not by_owner])
    return own >= GROUNDED_SHARE and own >= others
