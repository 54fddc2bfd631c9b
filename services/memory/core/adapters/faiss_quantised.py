"""A large partition's index: 4-bit product codes scanned with SIMD, then an exact re-rank.

Why not IVFFlat (what large partitions were before): at 1e5 hashing vectors the calibrated nprobe
probes 192 of 632 lists, so a search reads ~3e4 float vectors (46 MB): 3.8 ms p50 in-process, and
on 2 shared cores a scan that long is what gets preempted (p99 15 ms in-process, 27 ms over gRPC).
The same lists as 4-bit PQ codes (`IndexIVFPQFastScan`, dim/2 sub-quantisers: 96 bytes a vector
at 384 dims) are scanned from registers: 0.76 ms for the same nprobe. PQ scores are approximate, so
the best `RERANK` candidates (at least 4 x k) are re-scored exactly from the float vectors, which
the partition keeps anyway (`FloatStore`: they are what a rebuild re-trains on, and what the old
IVFFlat held in its lists). Recall is what the calibration measures on this whole pipeline
(`faiss_calibration.choose_probes` with `search`), so the nprobe covers the codes' error too;
measured on the bench's 1e5 vectors: recall 0.990 at nprobe 192 (IVFFlat: 0.991).

Removal by id: a fast-scan index packs codes in blocks, where faiss's hashtable direct map cannot
remove; without a direct map `remove_ids` scans the lists' ids once per call (about a millisecond
at 1e5, like the exact partition's scan) and compacts them. The float store removes in O(1) a row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

RERANK = 256
"""Candidates re-scored exactly per query (at least 4 x k). 100 already matched IVFFlat's recall
on the bench's 1e5 vectors; on 32-dim clusters queried on new clusters 160 gave 0.945 at the
calibrated nprobe and 256 gives 0.957 (the gathered rows cost about 0.1 ms at 384 dims)."""
_NBITS = 4  # fast-scan's SIMD kernels exist for 4-bit codes only

Matrix = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]


def subquantizers(dim: int) -> int:
    """About two dimensions per sub-quantiser (PQ needs a divisor of dim): 192 at 384. Four per
    sub-quantiser scans faster (0.50 vs 0.76 ms at the bench's 1e5) but its codes are too coarse
    for tight clusters: recall@10 0.81 at any nprobe on the unit tests' 32-dim clusters (0.99 at two)."""
    return next(m for m in range(max(1, dim // 2), 0, -1) if dim % m == 0)


def build_codes(ids: Ids, vectors: Matrix, nlist: int) -> faiss.IndexIVF:
    """The trained IVF-PQ fast-scan index over `vectors` (inner product), holding `ids`."""
    dim = vectors.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFPQFastScan(quantizer, dim, nlist, subquantizers(dim), _NBITS, faiss.METRIC_INNER_PRODUCT)
    index.cp.max_points_per_centroid = 64  # train on a bounded sample: fast, and good enough
    index.cp.niter = 10
    index.train(vectors)
    index.add_with_ids(vectors, ids)  # the Python wrapper keeps `quantizer` alive with `index`
    return index


def is_codes(index: faiss.Index) -> bool:
    return isinstance(index, faiss.IndexIVFPQFastScan)


class FloatStore:
    """The exact vectors of a partition by row id, in one growing matrix (a slot per row; a removed
    row's slot is reused), so a re-rank gathers a few rows and a removal costs no copy.

    A re-rank looks up the slots of 256 candidates. Through the row → slot dict that was 256
    Python lookups in a dict of 1e5 entries, each a cache miss: 0.16 ms p50 in-process at 1e5,
    a fifth of the partition's whole search (bench/bench_partition.py). So the store also keeps
    the rows it held at its last compaction as a sorted array with their slots (`np.searchsorted`,
    0.01 ms for 256), plus a dict of the rows given a slot since (`_recent`, small: compacted when
    it passes an eighth of the store). A removed row's sorted entry is marked gone (slot -1), so a
    row removed and added again is found in `_recent`, never at its old slot."""

    def __init__(self, dim: int) -> None:
        self._matrix: Matrix = np.zeros((0, dim), dtype=np.float32)
        self._slots: dict[int, int] = {}
        self._free: list[int] = []
        self._sorted_ids: Ids = np.zeros(0, dtype=np.int64)
        self._sorted_slots: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        self._recent: dict[int, int] = {}

    @classmethod
    def of(cls, ids: Ids, vectors: Matrix) -> FloatStore:
        """A store holding exactly these rows (a build or a load: one copy, no per-row growth)."""
        store = cls(vectors.shape[1])
        store._matrix = np.array(vectors, dtype=np.float32, copy=True)
        store._slots = dict(zip(ids.tolist(), range(len(ids)), strict=True))
        if len(store._slots) != len(ids):
            raise ValueError("a float store's row ids must be distinct")
        store._compact()
        return store

    def __len__(self) -> int:
        return len(self._slots)

    def add(self, ids: Ids, vectors: Matrix) -> None:
        slots = [self._slot_for(int(row_id)) for row_id in ids.tolist()]
        self._matrix[slots] = vectors
        if len(self._recent) > max(1024, len(self._slots) // 8):
            self._compact()

    def _slot_for(self, row_id: int) -> int:
        slot = self._slots.get(row_id)
        if slot is not None:
            return slot
        if self._free:
            slot = self._free.pop()
        else:
            slot = len(self._slots)
            if slot >= len(self._matrix):
                grown = np.zeros((max(1024, 2 * len(self._matrix)), self._matrix.shape[1]), dtype=np.float32)
                grown[: len(self._matrix)] = self._matrix
                self._matrix = grown
        self._slots[row_id] = slot
        self._recent[row_id] = slot
        return slot

    def _compact(self) -> None:
        """The sorted lookup remade from the dict: every held row, no mark of a removed one."""
        ids = np.fromiter(self._slots.keys(), dtype=np.int64, count=len(self._slots))
        slots = np.fromiter(self._slots.values(), dtype=np.intp, count=len(self._slots))
        order = np.argsort(ids)
        self._sorted_ids, self._sorted_slots, self._recent = ids[order], slots[order], {}

    def remove(self, ids: Iterable[int]) -> None:
        gone = []
        for row_id in ids:
            slot = self._slots.pop(row_id, None)
            if slot is not None:
                self._free.append(slot)
                self._recent.pop(row_id, None)
                gone.append(row_id)
        if gone and len(self._sorted_ids):
            at, found = self._sorted_positions(np.asarray(gone, dtype=np.int64))
            self._sorted_slots[at[found]] = -1

    def get(self, ids: Iterable[int] | Ids) -> Matrix:
        """The vectors of `ids` (every one held, else KeyError), in that order; `ids` any iterable
        of row ids or an int64 array (the re-rank's candidates, as faiss returns them)."""
        wanted = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, dtype=np.int64)
        slots = self._sorted_lookup(wanted)
        missing = np.flatnonzero(slots < 0)
        for i in missing.tolist():  # rows added since the last compaction (or not held: KeyError)
            slots[i] = self._recent[int(wanted[i])]
        rows: Matrix = np.take(self._matrix, slots, axis=0)
        return rows

    def _sorted_lookup(self, wanted: Ids) -> npt.NDArray[np.intp]:
        """Each wanted row's slot as of the last compaction; -1 where it was not held then or was
        removed since."""
        if not len(self._sorted_ids):
            return np.full(len(wanted), -1, dtype=np.intp)
        at, found = self._sorted_positions(wanted)
        slots: npt.NDArray[np.intp] = np.where(found, self._sorted_slots[at], -1)
        return slots

    def _sorted_positions(self, wanted: Ids) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        """Where each wanted row sits in the sorted ids (clamped to the last entry), and whether it is there."""
        at = np.minimum(np.searchsorted(self._sorted_ids, wanted), len(self._sorted_ids) - 1)
        return at, self._sorted_ids[at] == wanted


def reranked(index: faiss.Index, store: FloatStore, queries: Matrix, k: int, params: Any) -> tuple[Matrix, Ids]:
    """The exact top k of the codes' best `max(RERANK, 4k)` candidates: (scores, ids), rows of k
    padded with (-inf, -1) like faiss's own results."""
    wanted = min(max(RERANK, 4 * k), int(index.ntotal))
    _, found = index.search(queries, wanted, params=params)
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.full((len(queries), k), -1, dtype=np.int64)
    for row, query in enumerate(queries):
        candidates = found[row][found[row] >= 0]
        if not len(candidates):
            continue
        exact = store.get(candidates) @ query
        top = np.argsort(-exact, kind="stable")[:k]
        scores[row, : len(top)], ids[row, : len(top)] = exact[top], candidates[top]
    return scores, ids
