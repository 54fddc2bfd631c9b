"""Memory's MiniLM precision (MEMLOOP_MEMORY_ENCODER_PRECISION): the setting, the int8 embedder's
vectors against fp32's, and what a replica does with memories embedded at the other precision.

The figures behind the bounds and behind the fp32 default are `bench/bench_memory_encoder.py`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from services.common.auth_keys import SigningKey
from services.common.vocabulary import MemoryType
from services.memory.core.adapters.cache import LruRetrievalCache
from services.memory.core.adapters.embed_batcher import BatchingEmbedder
from services.memory.core.adapters.embedders import MiniLmEmbedder
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.adapters.in_memory import InMemoryChangeFeed, RecordingMetrics
from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.core.service.ports import IndexedChange
from services.memory.settings import MemorySettings

_ENV = {
    "MEMLOOP_POLICY_VERIFY_KEY": "key.pem",
    "MEMLOOP_MEMORY_DATABASE_URL": "postgresql://u@h/d",
    "MEMLOOP_AUTH_PUBLIC_KEYS": SigningKey.generate().public_pem(),
}
_SENTENCES = Path(__file__).resolve().parents[1] / "data" / "extraction_sentences.jsonl"
ALICE_MEMORIES = (
    "Please keep my meetings after 10:00 - mornings are for focus work.",
    "Sync with Bob Tan (partner.example), Tue 2026-12-08 10:30-11:00, accepted by Alice",
    "I'm lactose intolerant.",
    "Slack is the quickest way to reach me; email for anything formal.",
    "Please sign off my emails with 'Cheers, Alice'.",
)


@pytest.mark.parametrize(("value", "expected"), [(None, "fp32"), ("fp32", "fp32"), ("INT8", "int8"), ("bf16", "bf16")])
def test_the_precision_is_a_memory_setting_defaulting_to_fp32(value: str | None, expected: str) -> None:
    # Given memory's environment with or without MEMLOOP_MEMORY_ENCODER_PRECISION  When read
    extra = {} if value is None else {"MEMLOOP_MEMORY_ENCODER_PRECISION": value}
    # Then the precision is the one named, fp32 by default (int8 missed recall@10 >= 0.95 against fp32)
    assert MemorySettings.from_env({**_ENV, **extra}).encoder_precision == expected


@pytest.mark.parametrize("value", ["int4", "fp16", "float32"])
def test_an_unknown_precision_stops_memory_naming_the_setting(value: str) -> None:
    # Given a precision memory does not have  When settings are read  Then it refuses, naming the setting
    with pytest.raises(SystemExit, match="MEMLOOP_MEMORY_ENCODER_PRECISION"):
        MemorySettings.from_env({**_ENV, "MEMLOOP_MEMORY_ENCODER_PRECISION": value})
    with pytest.raises(ValueError, match="precision"):
        MiniLmEmbedder(precision=value)


def _extraction_texts() -> list[str]:
    """Every tenth sentence of the extraction set: memory texts of the project's own kind."""
    rows = [json.loads(line) for line in _SENTENCES.read_text(encoding="utf-8").splitlines()]
    return [row["text"] for row in rows[::10]]


@pytest.fixture(scope="module")
def embedders() -> dict[str, MiniLmEmbedder]:
    return {precision: MiniLmEmbedder(precision=precision) for precision in ("fp32", "int8", "bf16")}


def test_each_precision_stores_its_vectors_under_its_own_name(embedders: dict[str, MiniLmEmbedder]) -> None:
    # Given the two embedders  Then fp32 keeps the name vectors were stored under before the setting,
    # and int8's differs, so a deployment that switches never mixes the two spaces
    assert embedders["fp32"].name == "all-MiniLM-L6-v2"
    assert embedders["int8"].name == "all-MiniLM-L6-v2+int8"
    assert embedders["bf16"].name == "all-MiniLM-L6-v2+bf16"
    assert BatchingEmbedder(embedders["int8"]).name == embedders["int8"].name  # what the service layer reads
    assert embedders["int8"].dim == embedders["fp32"].dim == embedders["bf16"].dim == 384


def test_int8_vectors_are_quantised_unit_length_and_near_fp32(embedders: dict[str, MiniLmEmbedder]) -> None:
    # Given memory texts from the extraction set, embedded in one batch and one at a time
    texts = _extraction_texts()
    int8, fp32 = embedders["int8"], embedders["fp32"]
    quantised, exact = int8.embed(texts), fp32.embed(texts)
    single = np.concatenate([int8.embed([text], kind="query") for text in texts[:20]])
    # Then int8 really runs quantised linear layers and fp32 none
    assert [m for m in int8._model.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
    assert not [m for m in int8._model.modules() if type(m) is torch.nn.Linear]
    assert not [m for m in fp32._model.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
    # And its rows are unit length and near fp32's, batched or alone (bench: min 0.926, mean 0.97)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-4)
    assert np.allclose(np.linalg.norm(single, axis=1), 1.0, atol=1e-4)
    cosines = np.sum(quantised * exact, axis=1)
    assert cosines.min() > 0.9 and cosines.mean() > 0.95
    alone = np.sum(single * exact[:20], axis=1)
    assert alone.min() > 0.9 and alone.mean() > 0.95
    # But not equal to them: another vector space, hence another name
    assert cosines.mean() < 0.999


def test_bf16_rows_are_bfloat16_products_unit_length_and_all_but_fp32s(embedders: dict[str, MiniLmEmbedder]) -> None:
    # Given memory texts from the extraction set, embedded in one batch and one at a time
    texts = _extraction_texts()
    bf16, fp32 = embedders["bf16"], embedders["fp32"]
    batched, exact = bf16.embed(texts), fp32.embed(texts)
    alone = np.concatenate([bf16.embed([text], kind="query") for text in texts[:20]])
    # Then every linear layer holds bfloat16 weights (none is left fp32 or quantised), and the rows show
    # it (not fp32's bit for bit)
    assert not [m for m in bf16._model.modules() if type(m) is torch.nn.Linear]
    weights = [m.weight for m in bf16._model.modules() if type(m).__name__ == "BFloat16Linear"]
    assert len(weights) >= 36 and {w.dtype for w in weights} == {torch.bfloat16}
    assert not np.array_equal(batched, exact)
    # And the rows are unit length and within cosine 0.999 of fp32's, batched or alone (probe: min 0.99998)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-4)
    assert np.sum(batched * exact, axis=1).min() > 0.999
    assert np.sum(alone * exact[:20], axis=1).min() > 0.999
    # And Alice's pairs keep their side of the 0.75 conflict cut (int8 moved one across it)
    alice32, alice16 = fp32.embed(list(ALICE_MEMORIES)), bf16.embed(list(ALICE_MEMORIES))
    assert np.array_equal(alice32 @ alice32.T >= 0.75, alice16 @ alice16.T >= 0.75)


def _replica(feed: InMemoryChangeFeed, directory: Path, embedder: MiniLmEmbedder) -> tuple[IndexSynchroniser, Any]:
    index = FaissVectorIndex(directory, embedder.dim)
    metrics = RecordingMetrics()
    sync = IndexSynchroniser(
        feed, index, BatchingEmbedder(embedder, on_embedded=metrics.texts_embedded), LruRetrievalCache(), metrics,
        replica_id="r1",
    )  # fmt: skip
    return sync, (index, metrics)


def test_a_replica_switched_to_int8_re_embeds_its_memories_and_still_finds_them(
    embedders: dict[str, MiniLmEmbedder], tmp_path: Path
) -> None:
    # Given Alice's memories stored with fp32 vectors and a replica that indexed and persisted them
    feed = InMemoryChangeFeed()
    vectors = embedders["fp32"].embed(list(ALICE_MEMORIES))
    for row_id, (text, vector) in enumerate(zip(ALICE_MEMORIES, vectors, strict=True), start=1):
        change = IndexedChange(row_id, f"m{row_id}", "acme", "alice", MemoryType.PREFERENCE, True, vector, text)
        feed.write(change, embedder=embedders["fp32"].name)
    before, _ = _replica(feed, tmp_path, embedders["fp32"])
    assert before.start() == "database"
    before.persist()
    # When the replica restarts in int8 on the same index folder
    after, (index, metrics) = _replica(feed, tmp_path, embedders["int8"])
    source = after.start()
    # Then it did not load the fp32 files: it rebuilt, embedding every active memory once in int8,
    # and stored those vectors under int8's name beside the fp32 ones
    assert source == "database" and metrics.loads == ["database"]
    assert metrics.embedded == {"document": len(ALICE_MEMORIES)} and feed.stored_vectors == len(ALICE_MEMORIES)
    # And a search finds the memories, not nothing
    query = embedders["int8"].embed(["when can I schedule meetings with Alice"], kind="query")[0]
    hits = index.search("acme", "alice", query, 10, frozenset())
    # (fp32 ranks the preference 0.505 and Bob's sync 0.500, int8 the other way round: near ties move)
    assert len(hits) == len(ALICE_MEMORIES) and {row_id for row_id, _ in hits[:2]} == {1, 2}
    # And switching back re-embeds nothing: the fp32 vectors are still stored
    after.persist()
    back, (_, back_metrics) = _replica(feed, tmp_path, embedders["fp32"])
    assert back.start() == "database" and back_metrics.embedded == {}
