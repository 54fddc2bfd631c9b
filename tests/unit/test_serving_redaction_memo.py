"""Serving's redaction memo: the redactor's output exactly, each short text scanned once, bounded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from services.common.redaction import RedactionMode, Redactor
from services.serving.adapters.redaction_memo import MemoRedact

_TEXTS = [
    "alice@acme.example",
    "Call me on +1 415 555 0134 tomorrow",
    "my password is hunter2-Correct-Horse",
    "Quick sync next week?",
    "",
    "Re: Scheduling",
    "x" * 300,  # longer than the memo keeps
]


class _Counting:
    def __init__(self) -> None:
        self.redactor = Redactor(RedactionMode.THOROUGH)
        self.calls: list[str] = []

    def __call__(self, text: str) -> str:
        self.calls.append(text)
        return self.redactor.redact(text).text


def test_the_memo_returns_exactly_what_the_redactor_returns_first_and_again() -> None:
    redactor = Redactor(RedactionMode.THOROUGH)
    memo = MemoRedact(_Counting())
    for _ in range(3):
        assert [memo(text) for text in _TEXTS] == [redactor.redact(text).text for text in _TEXTS]


def test_a_short_text_is_scanned_once_and_a_long_one_every_time() -> None:
    counting = _Counting()
    memo = MemoRedact(counting, max_chars=256)
    for _ in range(3):
        memo("alice@acme.example")
        memo("y" * 257)
    assert counting.calls.count("alice@acme.example") == 1
    assert counting.calls.count("y" * 257) == 3


def test_the_memo_keeps_no_raw_text_and_stays_within_its_bound() -> None:
    memo = MemoRedact(lambda text: text.upper(), max_entries=8)
    for i in range(50):
        assert memo(f"bob{i}@partner.example") == f"BOB{i}@PARTNER.EXAMPLE"
    assert len(memo) == 8
    assert not any(isinstance(key, str) for key in memo._memo)  # digests only


def test_the_memo_is_safe_under_concurrent_callers() -> None:
    memo = MemoRedact(lambda text: f"<{text}>", max_entries=16)
    texts = [f"t{i % 40}" for i in range(4000)]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(memo, texts)) == [f"<{text}>" for text in texts]
    assert len(memo) <= 16
