"""Text a sender controls costs work in proportion to its length, never its square.

Each case was quadratic before: 64 KB of "pass" cost serving's redaction 149 s (every stem re-read
the whole identifier around it), "PuTTY-User-Key-File-2" repeated 9.7 s for 32 KB, and an HTML
body of unclosed tags ("Bob <b@x.c>") 1 s for 64 KB in the worker (every tag scanned the stack).
Work is counted, not timed: the Python lines executed for a text four times as long must stay
within five times as many (a quadratic cost gives sixteen). bench/bench_redaction.py prints times.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from services.common.pii.addresses import addresses
from services.common.pii.credentials import credential_statements
from services.common.pii.scan import find_folded
from services.common.pii.secret_formats import provider_tokens
from services.common.text_folding import fold_for_matching
from services.worker.domain.email_parts import html_to_text


def python_lines(work: Callable[[], object]) -> int:
    """How many Python lines `work` executes (generator expressions included)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def grows_linearly(make: Callable[[int], str], run: Callable[[str], object], size: int = 2_000) -> bool:
    small = python_lines(lambda: run(make(size)))
    large = python_lines(lambda: run(make(4 * size)))
    return large <= 5 * max(small, 1)


def repeated(piece: str) -> Callable[[int], str]:
    return lambda size: (piece * (size // len(piece) + 1))[:size]


@pytest.mark.parametrize("piece", ["pass", "PuTTY-User-Key-File-2", "tokenkey", "password_", "x" * 30 + "secret"])
def test_credential_words_glued_into_one_long_identifier(piece: str) -> None:
    # Given a text that is one long identifier full of credential stems
    # When credential statements are read  Then the work grows with the length, not its square
    assert grows_linearly(repeated(piece), lambda text: list(credential_statements(text)))


@pytest.mark.parametrize("piece", ["Bob <b@x.c>\n", "<a>", '<div style="display:none">x', "<b><i><u>text"])
def test_html_with_unclosed_tags(piece: str) -> None:
    # Given an HTML body whose tags are never closed (or closed by tags nothing opened)
    def make(size: int) -> str:
        body = repeated(piece)(size)
        return body + "</z>" * (size // 8)

    # When its text is taken  Then the work grows with the length, not its square
    assert grows_linearly(make, html_to_text)


@pytest.mark.parametrize("piece", ["市区", "市1-", "東京都渋谷区1番", "市区町村" * 20 + "1号", "서울시 강남구 로 1 "])
def test_addresses_in_cjk_characters_and_korean_words(piece: str) -> None:
    # Given a text full of administrative units and block numbers: each block walks back a bounded
    # distance (the regular expressions' own cost is bench_redaction's adversarial row: a first pattern
    # that began at every unit character cost 13 s for 32 KB of "市区")
    def run(text: str) -> object:
        folded = fold_for_matching(text)
        return list(addresses(folded, folded.lower()))

    # When its addresses are found  Then the work grows with the length, not its square
    assert grows_linearly(repeated(piece), run)


def test_a_long_credential_identifier_is_still_read_after_a_short_one() -> None:
    # Given a long identifier full of stems, then an ordinary statement
    text = "pass" * 5_000 + " and then password: Granite77!"
    # When read  Then the statement's value is still found
    values = [text[start:end] for start, end, *_ in credential_statements(text)]
    assert "Granite77!" in values


def test_jwts_are_found_and_a_run_of_their_prefix_is_not_one() -> None:
    # Given a real-shaped JWT, and a long run of its prefix
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLWJ5dGVz"
    text = f"Authorization token {jwt} and then " + "eyJ" * 3_000
    # When provider formats are read
    spans = [text[start:end] for start, end, *_ in provider_tokens(text)]
    # Then the JWT is one span and the run is none
    assert spans == [jwt]


@pytest.mark.parametrize(
    "piece",
    [
        "bank: ",
        "Kestrel77 for gmail\n",
        "it's Ab1234x not Ab1234y, sorry ",
        "pw? x\n",
        "\U0001f510 ",
        "abandon ",
        "U/P ",
    ],
)
def test_the_eleventh_and_twelfth_probes_detectors(piece: str) -> None:
    # Given a text that repeats what starts one of these detectors  When every detector reads it
    def run(text: str) -> object:
        folded = fold_for_matching(text)
        return find_folded(folded)

    # Then the work grows with the length, not its square
    assert grows_linearly(repeated(piece), run)


@pytest.mark.parametrize(
    "piece",
    [
        "backup codes 1a2b3c ",
        "backup codes\n1a2b3c\n",
        "cvv 123 ",
        "exp 01/27 card ",
        "ssn,dob\n1,2\n",
        "a@ybl ",
        "A1B2",
    ],
)
def test_the_sixteenth_probes_detectors(piece: str) -> None:
    # Given a text that repeats what starts one of these detectors (a recovery-code list's name on every line
    # cost 235 s per 256 KB until a list already read was skipped)  When every detector reads it
    def run(text: str) -> object:
        folded = fold_for_matching(text)
        return find_folded(folded)

    # Then the work grows with the length, not its square
    assert grows_linearly(repeated(piece), run)
