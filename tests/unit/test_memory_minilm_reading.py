"""How memory's MiniLM reads a call (issue 15): at most 128 word pieces per text, forward passes of
16 length-sorted texts, and a text's vector independent of both for the texts memory stores.

The CPU figures behind the chunk are `bench/bench_memory_chunks.py`'s; no timing is asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from services.memory.core.adapters.embedders import MiniLmEmbedder

_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _fixture_texts() -> list[str]:
    """Every string of two words or more in the demo fixtures (Alice's mail, Priya's sessions...)."""

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return [s for item in items for s in strings(item)]

    found = [s for path in sorted(_FIXTURES.glob("*.json")) for s in strings(json.loads(path.read_text()))]
    return list(dict.fromkeys(s for s in found if len(s.split()) >= 2))


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    return MiniLmEmbedder()


class _CountingPasses:
    """Counts the model's forward passes and the padded length of each (a hook on its transformer)."""

    def __init__(self, embedder: MiniLmEmbedder) -> None:
        self.shapes: list[tuple[int, int]] = []
        transformer = embedder._model[0]  # sentence-transformers' Transformer module: one call per pass
        self._handle = transformer.register_forward_pre_hook(self._seen)

    def _seen(self, _module: Any, args: tuple[Any, ...]) -> None:
        rows, length = args[0]["input_ids"].shape
        self.shapes.append((int(rows), int(length)))

    def close(self) -> None:
        self._handle.remove()


def test_a_text_is_read_by_its_first_128_word_pieces(embedder: MiniLmEmbedder) -> None:
    # Given a pasted paragraph of about 190 word pieces, and the same paragraph cut after its 128th
    tokenizer = embedder._model.tokenizer
    paragraph = "The quarterly rollout plan moves the partner meetings to Tuesday mornings. " * 14
    pieces = tokenizer(paragraph, add_special_tokens=False)["input_ids"]
    assert len(pieces) > 180
    cut = tokenizer.decode(pieces[:126])  # 126 pieces + [CLS] + [SEP] = 128
    # When both are embedded
    long_vector, cut_vector = embedder.embed([paragraph, cut])
    # Then they are one vector: nothing after the 128th piece reaches the model
    assert float(long_vector @ cut_vector) > 0.9999
    counter = _CountingPasses(embedder)
    try:
        embedder.embed([paragraph])
    finally:
        counter.close()
    assert counter.shapes == [(1, 128)]


def test_a_call_of_64_texts_runs_in_passes_of_16_each_padded_to_its_own_longest(embedder: MiniLmEmbedder) -> None:
    # Given 64 texts of very different lengths
    texts = [("meetings after 10:00 " * (1 + i % 8)).strip() for i in range(64)]
    counter = _CountingPasses(embedder)
    try:
        # When they are embedded in one call
        vectors = embedder.embed(texts)
    finally:
        counter.close()
    # Then the model ran four passes of 16, and the passes of shorter texts are shorter
    assert [rows for rows, _ in counter.shapes] == [16, 16, 16, 16]
    lengths = [length for _, length in counter.shapes]
    assert min(lengths) < max(lengths)
    # Then each text's vector is the one it has alone (padding is masked out of the mean)
    alone = np.stack([embedder.embed([text])[0] for text in texts[:8]])
    assert float(np.min(np.sum(alone * vectors[:8], axis=1))) > 0.99999


def test_the_fixture_texts_are_all_under_the_cap_so_their_vectors_are_unchanged(embedder: MiniLmEmbedder) -> None:
    # Given every demo fixture text
    texts = _fixture_texts()
    tokenizer = embedder._model.tokenizer
    # Then none is longer than 128 word pieces (the longest is under 80)
    assert max(len(tokenizer(text)["input_ids"]) for text in texts) <= 128
    # Then their vectors under the cap are the ones the model gives reading up to 256 (its default)
    capped = embedder.embed(texts)
    embedder._model.max_seq_length = 256
    try:
        uncapped = embedder.embed(texts)
    finally:
        embedder._model.max_seq_length = 128
    assert float(np.min(np.sum(capped * uncapped, axis=1))) > 0.99999
