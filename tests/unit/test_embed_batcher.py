"""The batching embedder: each text reaches the model once while cached, concurrent calls share one model call."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from services.memory.core.adapters.embed_batcher import BatchingEmbedder
from services.memory.core.adapters.embedders import HashingEmbedder


class _Recording:
    """The hashing embedder, recording each call's texts; optionally held at a gate on its first call."""

    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self._inner = HashingEmbedder()
        self.calls: list[list[str]] = []
        self.entered = threading.Event()
        self._gate = gate
        self._fail = fail

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        self.entered.set()
        if self._gate is not None and len(self.calls) == 1:
            self._gate.wait(10)
        if self._fail:
            raise RuntimeError("model down")
        return self._inner.embed(texts)


def test_a_text_embedded_for_conflicts_is_not_embedded_again_for_apply() -> None:
    model = _Recording()
    embedder = BatchingEmbedder(model)
    first = embedder.embed(["likes tea", "works remotely"])
    second = embedder.embed(["likes tea"])
    assert model.calls == [["likes tea", "works remotely"]]
    np.testing.assert_array_equal(second[0], first[0])
    np.testing.assert_allclose(first, HashingEmbedder().embed(["likes tea", "works remotely"]))


def test_the_counter_counts_texts_the_model_ran_on_by_the_kind_that_asked_first() -> None:
    # Given: FindConflicts embeds two candidates as queries, one of them twice in the same call
    counted: list[tuple[str, int]] = []
    model = _Recording()
    embedder = BatchingEmbedder(model, on_embedded=lambda kind, count: counted.append((kind, count)))
    embedder.embed(["likes tea", "works remotely", "likes tea"], kind="query")
    # When: ApplyLearning stores one of them (cached) and one new text
    embedder.embed(["likes tea", "prefers mornings"], kind="document")
    # Then: three texts reached the model, and the counter says three: two queries, one document
    assert model.calls == [["likes tea", "works remotely"], ["prefers mornings"]]
    assert counted == [("query", 2), ("document", 1)]


def test_a_cached_vector_expires_after_its_ttl() -> None:
    now = [0.0]
    model = _Recording()
    embedder = BatchingEmbedder(model, ttl_seconds=30, clock=lambda: now[0])
    embedder.embed(["likes tea"])
    now[0] = 31.0
    embedder.embed(["likes tea"])
    assert model.calls == [["likes tea"], ["likes tea"]]


def test_calls_arriving_while_the_model_is_busy_share_the_next_model_call() -> None:
    gate = threading.Event()
    model = _Recording(gate)
    embedder = BatchingEmbedder(model, max_batch=64)
    results: dict[int, npt.NDArray[np.float32]] = {}

    def call(i: int) -> None:
        results[i] = embedder.embed([f"text {i}"])

    first = threading.Thread(target=call, args=(0,))
    first.start()
    assert model.entered.wait(5)  # the model is busy with the first call
    others = [threading.Thread(target=call, args=(i,)) for i in range(1, 9)]
    for thread in others:
        thread.start()
    while len(embedder._queue) < 8:  # an observable fact: all eight are queued behind the busy model
        threading.Event().wait(0.001)
    gate.set()
    for thread in [first, *others]:
        thread.join(10)
    assert model.calls[0] == ["text 0"]
    assert len(model.calls) == 2 and sorted(model.calls[1]) == sorted(f"text {i}" for i in range(1, 9))
    for i in range(9):
        np.testing.assert_allclose(results[i][0], HashingEmbedder().embed([f"text {i}"])[0])


def test_a_model_failure_reaches_the_caller_and_nothing_is_cached() -> None:
    model = _Recording(fail=True)
    embedder = BatchingEmbedder(model)
    with pytest.raises(RuntimeError, match="model down"):
        embedder.embed(["likes tea"])
    with pytest.raises(RuntimeError, match="model down"):
        embedder.embed(["likes tea"])
    assert len(model.calls) == 2
