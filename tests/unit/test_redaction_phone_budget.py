"""Phone numbers' matcher has a budget per text, and past it a hint is judged by its shape, failing closed.

A body of nothing but digit groups once made serving call phonenumbers nine times per group
(54 s of CPU for a 256 KB body). The cost is pinned here by counting the matcher's calls, not
by timing them; bench/bench_redaction.py prints the time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import phonenumbers
import pytest

from services.common.pii.model import FindingKind
from services.common.redaction import MATCHER_CALLS_PER_TEXT, RedactionMode, Redactor


@pytest.fixture
def matcher_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = phonenumbers.PhoneNumberMatcher

    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        calls[0] += 1
        return iter(real(*args, **kwargs))

    monkeypatch.setattr(phonenumbers, "PhoneNumberMatcher", counting)  # redaction looks it up at each call
    return calls


@pytest.mark.parametrize("filler", ["0123 4567 ", "1234 5678 ", "1" * 40 + " ", "+44 20 7946 0958, "])
def test_digit_dense_text_costs_a_bounded_number_of_matcher_calls(matcher_calls: list[int], filler: str) -> None:
    # Given a 64 KB text made of one digit-dense pattern  When redacted thoroughly
    Redactor(RedactionMode.THOROUGH).redact(filler * (65_536 // len(filler)))
    # Then phonenumbers ran at most the budget's calls (a national number may take its regions past it once)
    assert matcher_calls[0] <= MATCHER_CALLS_PER_TEXT + 8


def test_phone_numbers_past_the_budget_are_still_redacted(matcher_calls: list[int]) -> None:
    # Given more real phone numbers than the budget covers, in a list
    numbers = [f"+44 20 7946 {n:04d}" for n in range(MATCHER_CALLS_PER_TEXT * 2)]
    text = "Call list: " + "; ".join(numbers) + "."
    # When redacted
    result = Redactor(RedactionMode.THOROUGH).redact(text)
    # Then none survives, the last included, and the budget held
    assert not any(number in result.text for number in numbers)
    assert result.text.count(FindingKind.PHONE.placeholder) == len(numbers)
    assert matcher_calls[0] <= MATCHER_CALLS_PER_TEXT + 8


def test_past_the_budget_labelled_ids_and_dates_still_stay() -> None:
    # Given a long text whose digit runs are mostly labelled order numbers, then a date and an order number
    filler = "Order number 88412077 ships on Tuesday. " * (MATCHER_CALLS_PER_TEXT + 10)
    tail = "Invoice no. 55102398 is due 2026-03-14, call 020 7946 0958."
    # When redacted
    result = Redactor(RedactionMode.THOROUGH).redact(filler + tail)
    # Then the ids and the date are kept; the phone number is not
    assert result.text.startswith(filler)
    assert "Invoice no. 55102398 is due 2026-03-14" in result.text
    assert "7946 0958" not in result.text


def test_ordinary_mail_stays_under_the_budget(matcher_calls: list[int]) -> None:
    # Given a mail with a few phone numbers and ids  When redacted
    text = "Call me on +44 20 7946 0958 or 0800 123 4567; order 88412077; ref 2026-004512."
    result = Redactor(RedactionMode.THOROUGH).redact(text)
    # Then phonenumbers judged each number (none fell to the shape rule)
    assert all(f.detector != "phone-shaped:unchecked" for f in result.findings)
    assert result.text.count(FindingKind.PHONE.placeholder) == 2
    assert 0 < matcher_calls[0] < MATCHER_CALLS_PER_TEXT
