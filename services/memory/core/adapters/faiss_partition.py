"""One user's vectors: exact while small, IVF (removable, approximate) past a measured size.

Every query memory serves is one user's (SearchMemories, GetContext, FindConflicts), so the index
is partitioned by (tenant, user) and a query scans only its user's vectors, never the tenant's.

- **Exact** (`IndexIDMap2(IndexFlatIP)`) up to `IVF_THRESHOLD` vectors: a scan of 20k x 384 floats
  is about a millisecond and needs no training. (bench/bench_search.py measures the crossover.)
- **IVF** (`IndexIVFFlat`, inner product, hashtable direct map so `remove_ids` works for the
  arbitrary row ids) past it, trained on the partition's own vectors, `nlist ≈ 4·√n`. `nprobe` is
  chosen at build time as the smallest that gives recall@10 ≥ `TARGET_RECALL` against exact search
  on a sample of the partition's own vectors used as queries; a partition that grows to
  `REBUILD_FACTOR` times its trained size is rebuilt (retrained, nprobe re-measured).

Both kinds remove by id and persist with `faiss.write_index` (IVF stores its direct map).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from services.common.vocabulary import MemoryType

IVF_THRESHOLD = 20_000
TARGET_RECALL = 0.95
REBUILD_FACTOR = 4
_RECALL_QUERIES = 200
_RECALL_K = 10
_QUERY_NOISE = 0.5
"""Calibration queries are stored vectors plus noise of this norm: a new text near stored ones."""
_HEADROOM = 2
"""nprobe is set to this multiple of the calibrated one: fresh queries are harder than the sample."""

Matrix = npt.NDArray[np.float32]
_HASHTABLE: int = faiss.DirectMap.Hashtable  # type: ignore[attr-defined]


def _flat(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def _build_ivf(ids: npt.NDArray[np.int64], vectors: Matrix) -> tuple[faiss.Index, int]:
    n, dim = vectors.shape
    nlist = max(16, int(2 * math.sqrt(n)))
    quantizer = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.max_points_per_centroid = 64  # train on a bounded sample: fast, and good enough
    ivf.cp.niter = 10
    ivf.train(vectors)
    ivf.set_direct_map_type(_HASHTABLE)
    ivf.add_with_ids(vectors, ids)  # the Python wrapper keeps `quantizer` alive with `ivf`
    return ivf, _choose_nprobe(ivf, ids, vectors)


def _choose_nprobe(ivf: faiss.IndexIVFFlat, ids: npt.NDArray[np.int64], vectors: Matrix) -> int:
    """Smallest nprobe (doubling) with recall@10 ≥ TARGET_RECALL against exact search, the
    queries being a sample of the partition's own vectors, perturbed so a query is not trivially
    its own nearest neighbour."""
    rng = np.random.default_rng(0)
    picks = rng.choice(len(vectors), size=min(_RECALL_QUERIES, len(vectors)), replace=False)
    queries = vectors[picks] + rng.normal(
        0, _QUERY_NOISE / math.sqrt(vectors.shape[1]), size=(len(picks), vectors.shape[1])
    ).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(vectors)
    _, rows = exact.search(queries, _RECALL_K)
    truth = [set(ids[r[r >= 0]].tolist()) for r in rows]
    wanted = sum(len(t) for t in truth)
    nprobe = 1
    while nprobe < ivf.nlist:
        ivf.nprobe = nprobe
        _, found = ivf.search(queries, _RECALL_K)
        hits = sum(len(set(f) & t) for f, t in zip(found.tolist(), truth, strict=True))
        if hits >= TARGET_RECALL * wanted:
            break
        nprobe *= 2
    ivf.nprobe = min(nprobe * _HEADROOM, ivf.nlist)
    return int(ivf.nprobe)


def readable_partition(index: faiss.Index, dim: int) -> bool:
    """What `load` accepts: an exact IDMap2 or an IVF with a hashtable direct map, of `dim`."""
    if index.d != dim:
        return False
    if isinstance(index, faiss.IndexIDMap2):
        return True
    try:
        ivf = faiss.extract_index_ivf(index)
    except RuntimeError:
        return False
    return bool(ivf.direct_map.type == _HASHTABLE)


@dataclass
class Partition:
    """The vectors of one (tenant, user): their index and the type of each row."""

    index: faiss.Index
    types: dict[int, MemoryType] = field(default_factory=dict)
    trained_size: int = 0
    version: int = 0
    """Bumped by every add and remove: a rebuild made off the lock is installed only if unchanged."""

    @classmethod
    def empty(cls, dim: int) -> Partition:
        return cls(_flat(dim))

    @property
    def approximate(self) -> bool:
        return not isinstance(self.index, faiss.IndexIDMap2)

    def remove(self, row_ids: list[int]) -> None:
        ids = np.asarray(row_ids, dtype=np.int64)
        # IVF's hashtable direct map removes only by an explicit array (O(m) lookups); the flat
        # IDMap2 scans its rows once, testing membership in a hashed batch.
        selector = faiss.IDSelectorArray(ids) if self.approximate else faiss.IDSelectorBatch(ids)
        self.index.remove_ids(selector)
        self.version += 1
        for row_id in row_ids:
            self.types.pop(row_id, None)

    def add(self, ids: npt.NDArray[np.int64], vectors: Matrix, types: list[MemoryType]) -> None:
        self.index.add_with_ids(vectors, ids)
        self.types.update(zip(ids.tolist(), types, strict=True))
        self.version += 1

    @property
    def needs_rebuild(self) -> bool:
        if self.approximate:
            return bool(self.index.ntotal >= REBUILD_FACTOR * max(self.trained_size, 1))
        return bool(self.index.ntotal > IVF_THRESHOLD)

    def snapshot(self) -> tuple[int, npt.NDArray[np.int64], Matrix]:
        """(version, ids, vectors): cheap copies taken under the owner's lock."""
        ids = np.fromiter(self.types, dtype=np.int64, count=len(self.types))
        return self.version, ids, self.index.reconstruct_batch(ids)  # IDMap2's map or IVF's direct map

    @staticmethod
    def build(ids: npt.NDArray[np.int64], vectors: Matrix) -> faiss.Index:
        """The IVF for a snapshot: slow (k-means, nprobe search), so run it off the owner's lock."""
        return _build_ivf(ids, vectors)[0]

    def install(self, version: int, index: faiss.Index, size: int) -> bool:
        """Swap in a rebuilt index if nothing changed since its snapshot (else the next try wins)."""
        if version != self.version:
            return False
        self.index, self.trained_size = index, size
        self.version += 1
        return True

    def rebuild(self) -> None:
        """Exact → IVF (or IVF → retrained IVF) now, in the caller's thread (tests, benches)."""
        version, ids, vectors = self.snapshot()
        self.install(version, self.build(ids, vectors), len(ids))

    def search(self, query: Matrix, k: int, types: frozenset[MemoryType]) -> list[tuple[int, float]]:
        n = self.index.ntotal
        if n == 0:
            return []
        wanted: list[int] | None = None
        if types and not set(self.types.values()) <= types:
            wanted = [i for i, t in self.types.items() if t in types]
            if not wanted:
                return []
        params: Any = faiss.SearchParametersIVF() if self.approximate else faiss.SearchParameters()
        if self.approximate:
            params.nprobe = faiss.extract_index_ivf(self.index).nprobe
        if wanted is not None:
            params.sel = faiss.IDSelectorBatch(np.asarray(wanted, dtype=np.int64))
        limit = min(k, n if wanted is None else len(wanted))
        scores, found = self.index.search(query, limit, params=params)
        return [(int(i), float(s)) for i, s in zip(found[0], scores[0], strict=True) if i >= 0]
