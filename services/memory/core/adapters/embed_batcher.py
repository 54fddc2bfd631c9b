"""An Embedder around the model that embeds each text once and concurrent calls together.

Two costs of the learning path, both from calling the model per RPC:

- The same text was embedded twice per event: FindConflicts embeds the candidates, then
  ApplyLearning embeds the ones stored. A short-lived cache keyed by the text's SHA-256 (and the
  model's name) hands ApplyLearning the vectors FindConflicts made. Entries expire after
  `ttl_seconds` (default 30 s: long enough for one event's two hops, short enough that no text's
  vector outlives its event by much) and the cache is bounded (`max_entries`, least recent out).
- Concurrent RPC threads each called the model behind its lock, one small batch at a time. Here
  callers queue their missing texts; whichever caller finds the model idle takes everything queued
  (up to `max_batch` texts) and makes ONE model call for all of them. No timer: a lone caller goes
  straight through, and callers arriving while the model is busy ride the next call together.

What reached the model is counted here, by the `kind` of the call that first asked for each text
(`on_embedded(kind, count)`, memory's memloop_embedded_texts_total): a text FindConflicts embedded
as a query and ApplyLearning then found cached counts once, as a query. The service used to count
every text it asked for, so the counter said twice the model's work.

Vectors are identical in meaning to the model's own (a batched forward pass differs only by float
rounding), so stores, conflicts and retrieval behave as before.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from services.memory.core.service.ports import Embedder


@dataclass
class _Request:
    keys: list[bytes]
    texts: list[str]
    kind: str
    vectors: npt.NDArray[np.float32] | None = None
    error: BaseException | None = None
    done: bool = False
    rows: dict[bytes, int] = field(default_factory=dict)


class BatchingEmbedder:
    """Embedder port; thread-safe. `model_calls` and `texts_embedded` count what reached the model."""

    def __init__(
        self,
        inner: Embedder,
        *,
        max_batch: int = 64,
        ttl_seconds: float = 30.0,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
        on_embedded: Callable[[str, int], None] | None = None,
    ) -> None:
        """`on_embedded(kind, count)`: after each model call, the texts it embedded by kind."""
        self._inner = inner
        self._on_embedded = on_embedded
        self._max_batch = max(1, max_batch)
        self._ttl = ttl_seconds
        self._max_entries = max_entries
        self._clock = clock
        self._cache: OrderedDict[bytes, tuple[float, npt.NDArray[np.float32]]] = OrderedDict()
        self._cond = threading.Condition()
        self._queue: list[_Request] = []
        self._busy = False
        self.model_calls = 0
        self.texts_embedded = 0

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        keys = [self._key(t) for t in texts]
        missing: dict[bytes, str] = {}
        with self._cond:
            for row, key in enumerate(keys):
                cached = self._get(key)
                if cached is None:
                    missing.setdefault(key, texts[row])
                else:
                    out[row] = cached
        if missing:
            found = self._embed_missing(list(missing), list(missing.values()), kind)
            for row, key in enumerate(keys):
                if key in found:
                    out[row] = found[key]
        return out

    def forget(self) -> None:
        """Drop every cached vector (for a deletion that wants no derived copy left in memory)."""
        with self._cond:
            self._cache.clear()

    # --- micro-batching -------------------------------------------------------------------------

    def _embed_missing(self, keys: list[bytes], texts: list[str], kind: str) -> dict[bytes, npt.NDArray[np.float32]]:
        request = _Request(keys, texts, kind)
        with self._cond:
            self._queue.append(request)
            while not request.done:
                if self._busy:
                    self._cond.wait()
                    continue
                batch = self._take()
                self._busy = True
                self._cond.release()
                try:
                    self._run(batch)
                finally:
                    self._cond.acquire()
                    self._busy = False
                    self._cond.notify_all()
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return {key: request.vectors[request.rows[key]] for key in request.keys}

    def _take(self) -> list[_Request]:
        """Queued requests in arrival order up to `max_batch` texts (always at least one request)."""
        batch: list[_Request] = []
        total = 0
        while self._queue and (not batch or total + len(self._queue[0].texts) <= self._max_batch):
            request = self._queue.pop(0)
            batch.append(request)
            total += len(request.texts)
        return batch

    def _run(self, batch: list[_Request]) -> None:
        """One model call for the batch's distinct texts (called without the lock held)."""
        unique: dict[bytes, str] = {}
        kinds: dict[str, int] = {}
        for request in batch:
            for key, text in zip(request.keys, request.texts, strict=True):
                if key not in unique:
                    unique[key] = text
                    kinds[request.kind] = kinds.get(request.kind, 0) + 1
        order = list(unique)
        try:
            vectors = self._inner.embed([unique[k] for k in order])
        except BaseException as exc:
            with self._cond:
                for request in batch:
                    request.error, request.done = exc, True
            raise
        rows = {key: i for i, key in enumerate(order)}
        with self._cond:
            self.model_calls += 1
            self.texts_embedded += len(order)
            now = self._clock()
            for key, row in rows.items():
                self._put(key, vectors[row], now)
            for request in batch:
                request.vectors, request.rows, request.done = vectors, rows, True
        if self._on_embedded is not None:
            for kind, count in kinds.items():
                self._on_embedded(kind, count)

    # --- the cache (callers hold the lock) ------------------------------------------------------

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self._inner.name}\x00{text}".encode()).digest()

    def _get(self, key: bytes) -> npt.NDArray[np.float32] | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        stamp, vector = entry
        if self._clock() - stamp > self._ttl:
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return vector

    def _put(self, key: bytes, vector: npt.NDArray[np.float32], now: float) -> None:
        self._cache[key] = (now, vector)
        self._cache.move_to_end(key)
        while len(self._cache) > self._max_entries:
            self._cache.popitem(last=False)
