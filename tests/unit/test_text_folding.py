"""The one text-folding module: idempotent, every confusable applied, offsets map back, shared by all users."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.common import never_suppress, redaction
from services.common.text_folding import CONFUSABLES, fold_for_matching, fold_with_map, fold_words

# Text drawn from the scripts the table covers, plus marks, format characters and fullwidth forms.
_ALPHABET = st.characters(
    codec="utf-8",
    categories=("L", "M", "N", "P", "Zs", "Cf"),
)
_LOOKALIKES = st.sampled_from(sorted(CONFUSABLES))
_TEXT = st.lists(st.one_of(_ALPHABET, _LOOKALIKES), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_folding_is_idempotent(text: str) -> None:
    # Given any text  When folded twice  Then the second fold changes nothing
    once = fold_for_matching(text)
    assert fold_for_matching(once) == once
    assert fold_words(fold_words(text)) == fold_words(text)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_the_offset_map_points_every_folded_character_at_its_original(text: str) -> None:
    # Given any text  When folded with its map
    folded, origin = fold_with_map(text)
    # Then the folded text is the plain fold, and each run of folded characters comes from one original
    assert folded == fold_for_matching(text)
    assert len(origin) == len(folded)
    assert list(origin) == sorted(origin)
    assert all(0 <= i < len(text) for i in origin)


@pytest.mark.parametrize(("lookalike", "latin"), sorted(CONFUSABLES.items()))
def test_every_table_entry_is_applied_inside_a_word(lookalike: str, latin: str) -> None:
    # Given a look-alike letter inside a Latin word  When folded  Then it became its Latin letter
    assert fold_for_matching(f"pa{lookalike}ss") == f"pa{latin}ss"


@pytest.mark.parametrize(
    ("disguised", "plain"),
    [
        ("pass\u200bword", "password"),  # zero-width space
        ("pass\u2060wo\ufeffrd", "password"),  # word joiner, BOM
        ("pa\u00adss\u200dword", "password"),  # soft hyphen, zero-width joiner
        ("\u202epassword\u202c", "password"),  # bidi override
        ("p\u0337a\u0337s\u0337s\u0337", "pass"),  # strike-through combining marks
        ("caf\u00e9 na\u00efve", "cafe naive"),  # accents
        ("\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44", "password"),  # fullwidth
        ("\U0001d429\U0001d41a\U0001d42c\U0001d42c", "pass"),  # mathematical bold
        ("\ufb01le", "file"),  # ligature
        ("\u1d18\u1d00ss\u1d21\u1d0f\u0280\u1d05", "password"),  # small capitals
        ("\u0440\u0430\u0455\u0455\u051d\u043e\u0433\u0501", "password"),  # all Cyrillic
        ("\u03c1\u03b1\u03c2\u03c2\u03c9\u03bf\u0433d", "password"),  # Greek with final sigma
    ],
)
def test_disguises_fold_to_the_plain_word(disguised: str, plain: str) -> None:
    # Given a disguised word  When folded  Then it reads as the plain word
    assert fold_for_matching(disguised) == plain


def test_every_user_folds_with_the_same_table() -> None:
    # Given letters the two old tables disagreed on (five only in never-suppress, three only in redaction)
    disputed = "\u03b3\u03bc\u03c2\u0131\u04af\u0451\u0457\u03f2"
    # When the never-suppress guard and redaction fold them
    # Then both read the same Latin letters
    assert never_suppress.normalise(disputed) == "yusiyeic"
    assert redaction.fold_for_matching(disputed) == "yusiyeic"
