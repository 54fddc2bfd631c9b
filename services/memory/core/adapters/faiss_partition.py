"""One user's vectors: exact while small, IVF-PQ codes re-ranked exactly past a measured size.

Every query memory serves is one user's (SearchMemories, GetContext, FindConflicts), so the index
is partitioned by (tenant, user) and a query scans only its user's vectors, never the tenant's.

- **Exact** (`IndexIDMap2(IndexFlatIP)`) up to `IVF_THRESHOLD` vectors: a scan of 20k x 384 floats
  is about a millisecond and needs no training. (bench/bench_search.py measures the crossover.)
- **Codes** (`IndexIVFPQFastScan`, inner product, 4-bit PQ, with the float vectors beside it in a
  `FloatStore`; `faiss_quantised.py`) past it, trained on the partition's own vectors,
  `nlist ≈ 2·√n` (4·√n probes a little less for the same recall at 1e5 but trains three times
  longer). A query scans its lists' codes and re-ranks the best candidates exactly. `nprobe` is
  measured at build time against exact search on that whole pipeline (`faiss_calibration.py`); a
  partition that grows to `REBUILD_FACTOR` times its trained size is rebuilt (retrained, nprobe
  re-measured).
- **Legacy IVF** (`IndexIVFFlat` with a hashtable direct map): what large partitions were until
  2026-12-01 and may still be on disk. It loads and serves as before, and is rebuilt as codes the
  next time its tenant's index changes (`needs_rebuild`).

A type filter (FindConflicts, typed searches) needs the ids of the wanted types: the partition
keeps a count per type (a filter naming every type present is no filter) and the selector of the
last filters asked, until the next add or remove.

Every kind removes by id and persists with `faiss.write_index` (the codes' float vectors beside it).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.faiss_calibration import Probes, choose_probes
from services.memory.core.adapters.faiss_quantised import FloatStore, build_codes, is_codes, reranked

IVF_THRESHOLD = 20_000
REBUILD_FACTOR = 4
NLIST_FACTOR = 2.0
"""nlist = NLIST_FACTOR x sqrt(n) lists for a partition of n vectors."""

Matrix = npt.NDArray[np.float32]
_HASHTABLE: int = faiss.DirectMap.Hashtable  # type: ignore[attr-defined]


def _flat(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


@dataclass(frozen=True)
class Built:
    """A rebuilt partition's index, its calibrated probes and its float vectors."""

    index: faiss.Index
    probes: Probes
    floats: FloatStore


def _build(ids: npt.NDArray[np.int64], vectors: Matrix) -> Built:
    nlist = max(16, int(NLIST_FACTOR * math.sqrt(len(vectors))))
    codes, floats = build_codes(ids, vectors, nlist), FloatStore.of(ids, vectors)

    def search(queries: Matrix, k: int, nprobe: int) -> tuple[Matrix, npt.NDArray[np.int64]]:
        params = faiss.SearchParametersIVF()
        params.nprobe = nprobe
        return reranked(codes, floats, queries, k, params)

    # The calibration's exact search runs over `vectors` by position, the pipeline answers row
    # ids: per_query_recall compares scores only, so the two need not match.
    return Built(codes, choose_probes(codes, vectors, search), floats)


def readable_partition(index: faiss.Index, dim: int, *, with_floats: bool) -> bool:
    """What `load` accepts, of `dim`: codes when their float vectors were persisted beside them,
    else an exact IDMap2 or a legacy IVF with a hashtable direct map."""
    if index.d != dim:
        return False
    if with_floats:
        return is_codes(index)
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
    probes: Probes | None = None
    """An IVF's calibrated nprobes; None for an exact partition, or an IVF persisted before they
    were kept (it is searched at the nprobe stored in the index)."""
    floats: FloatStore | None = None
    """The exact vectors of a codes partition (re-rank, rebuilds, persistence); None otherwise."""
    type_counts: Counter[MemoryType] = field(init=False)
    """Rows per type, kept with `types`: whether a filter excludes anything is O(types), not O(rows)."""
    _selectors: dict[frozenset[MemoryType], tuple[int, Any, int]] = field(init=False, default_factory=dict)
    """filter → (version, its IDSelectorBatch, rows it admits), valid while `version` is unchanged."""

    def __post_init__(self) -> None:
        self.type_counts = Counter(self.types.values())

    @classmethod
    def empty(cls, dim: int) -> Partition:
        return cls(_flat(dim))

    @property
    def approximate(self) -> bool:
        return not isinstance(self.index, faiss.IndexIDMap2)

    def remove(self, row_ids: list[int]) -> None:
        ids = np.asarray(row_ids, dtype=np.int64)
        # A legacy IVF's hashtable direct map removes only by an explicit array (O(m) lookups); the
        # flat IDMap2 and the codes (no direct map) scan their ids once, testing a hashed batch.
        legacy = self.approximate and self.floats is None
        self.index.remove_ids(faiss.IDSelectorArray(ids) if legacy else faiss.IDSelectorBatch(ids))
        if self.floats is not None:
            self.floats.remove(row_ids)
        self.version += 1
        for row_id in row_ids:
            kind = self.types.pop(row_id, None)
            if kind is not None:
                self._count(kind, -1)

    def add(self, ids: npt.NDArray[np.int64], vectors: Matrix, types: list[MemoryType]) -> None:
        self.index.add_with_ids(vectors, ids)
        if self.floats is not None:
            self.floats.add(ids, vectors)
        added = dict(zip(ids.tolist(), types, strict=True))
        for row_id in added.keys() & self.types.keys():  # a row re-added: its old type no longer counts
            self._count(self.types[row_id], -1)
        self.types.update(added)
        self.type_counts.update(added.values())  # C loops: a start-up adds 1e6 rows
        self.version += 1

    def _count(self, kind: MemoryType, delta: int) -> None:
        self.type_counts[kind] += delta
        if self.type_counts[kind] <= 0:
            del self.type_counts[kind]

    @property
    def needs_rebuild(self) -> bool:
        if self.approximate:
            legacy = self.floats is None  # an IVFFlat from disk: rebuilt as codes at the first chance
            return legacy or bool(self.index.ntotal >= REBUILD_FACTOR * max(self.trained_size, 1))
        return bool(self.index.ntotal > IVF_THRESHOLD)

    def snapshot(self) -> tuple[int, npt.NDArray[np.int64], Matrix]:
        """(version, ids, vectors): cheap copies taken under the owner's lock."""
        ids = np.fromiter(self.types, dtype=np.int64, count=len(self.types))
        if self.floats is not None:
            return self.version, ids, self.floats.get(ids)
        return self.version, ids, self.index.reconstruct_batch(ids)  # IDMap2's map or IVF's direct map

    @staticmethod
    def build(ids: npt.NDArray[np.int64], vectors: Matrix) -> Built:
        """The codes for a snapshot: slow (k-means, PQ, nprobe search), so run it off the owner's lock."""
        return _build(ids, vectors)

    def install(self, version: int, built: Built, size: int) -> bool:
        """Swap in a rebuilt index if nothing changed since its snapshot (else the next try wins)."""
        if version != self.version:
            return False
        self.index, self.probes, self.floats, self.trained_size = built.index, built.probes, built.floats, size
        self.version += 1
        return True

    def rebuild(self) -> None:
        """Exact → IVF (or IVF → retrained IVF) now, in the caller's thread (tests, benches)."""
        version, ids, vectors = self.snapshot()
        self.install(version, self.build(ids, vectors), len(ids))

    def _filter(self, types: frozenset[MemoryType]) -> tuple[Any, int] | None:
        """(selector, rows it admits) for a filter that excludes some row, else None. The selector
        is built once per filter and version: at 1e5 rows listing the wanted ids takes ~10 ms."""
        if not types or self.type_counts.keys() <= types:
            return None
        cached = self._selectors.get(types)
        if cached is not None and cached[0] == self.version:
            return cached[1], cached[2]
        wanted = np.fromiter((i for i, t in self.types.items() if t in types), dtype=np.int64)
        selector = faiss.IDSelectorBatch(wanted) if len(wanted) else None
        self._selectors[types] = (self.version, selector, len(wanted))
        return selector, len(wanted)

    def _nprobe(self, query: Matrix) -> int:
        """The gated nprobe (`faiss_calibration.Probes`): one look at the coarse quantizer, whose
        632 centroids at 1e5 cost ~0.05 ms, decides between narrow and wide."""
        ivf = faiss.extract_index_ivf(self.index)
        if self.probes is None:
            return int(ivf.nprobe)
        best, _ = ivf.quantizer.search(query, 1)
        return self.probes.for_query(float(best[0, 0]))

    def search(self, query: Matrix, k: int, types: frozenset[MemoryType]) -> list[tuple[int, float]]:
        n = self.index.ntotal
        if n == 0:
            return []
        narrowed = self._filter(types)
        if narrowed is not None and narrowed[1] == 0:
            return []
        params: Any = faiss.SearchParametersIVF() if self.approximate else faiss.SearchParameters()
        if self.approximate:
            params.nprobe = self._nprobe(query)
        if narrowed is not None:
            params.sel = narrowed[0]
        limit = min(k, n if narrowed is None else narrowed[1])
        if self.floats is not None:
            scores, found = reranked(self.index, self.floats, query, limit, params)
        else:
            scores, found = self.index.search(query, limit, params=params)
        return [(int(i), float(s)) for i, s in zip(found[0], scores[0], strict=True) if i >= 0]
