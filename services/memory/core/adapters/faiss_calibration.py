"""How many IVF lists a partition's queries must probe for recall@10 ≥ the target (issue 15).

`nprobe` is the whole speed/recall trade of an IVF partition: at 1e5 vectors a search probing 512
of its 632 lists costs what exact search costs (4.5 ms in-process), one probing 192 a third of
that. It is measured at build time against exact search, on queries of four kinds:

- **near one memory**: a stored vector plus noise (a text close to one already remembered; what
  FindConflicts asks);
- **between two** and **among three**: the normalised sum of two or three stored vectors drawn at
  random (a query touching several memories' subjects, whose neighbours lie in several lists);
- **random direction**: an isotropic Gaussian direction, a query about no stored subject.

Random directions need far more lists than the others where the data has structure a random
direction does not share (hashing vectors at 1e5: 384 of 632 lists against 192; clustered
384-dimensional data: 48 against 12), and the two are told apart before probing: a random
direction's best list scores low. So a partition keeps two nprobes and a gate (`Probes`): a query
whose best list scores above what 99% of random directions reach is probed as the first three
kinds need (`narrow`), any other as all four need (`wide`). Where random directions do resemble
the data (low-dimensional clusters covering the sphere, as in the unit tests) the gate sends most
queries wide, which is what such queries need.

The previous calibration used "near one memory" only and doubled the nprobe it found: fresh
queries about new subjects on clustered data needed twice its lists (0.896 recall where the sample
said 0.986), while on hashing vectors the bench's text queries needed fewer (x2 gave 512 of 632
lists, a near-full scan). No flat headroom is applied here; the margin is the sample's own: a kind
of query passes at an nprobe when its mean recall minus `_Z` standard errors (over its queries)
reaches the target, and every kind must.

Recall is tie-aware: a returned vector counts when its score reaches the exact k-th best (the
hashing embedder gives many vectors the same score, and any of the tied is a right answer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt

TARGET_RECALL = 0.95
RECALL_K = 10
QUERIES_PER_KIND = 150
_Z = 2.0
"""Standard errors below its mean recall a kind of query must still meet the target."""
_NEAR_NOISE = 0.5
"""Norm of the noise added to a stored vector for a "near one memory" query."""
_TIE = 1e-5
_GATE_QUANTILE = 0.99
"""A query is "near the data" when its best list scores above this quantile of random directions'."""

Matrix = npt.NDArray[np.float32]


def _normalised(rows: npt.NDArray[np.floating]) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Matrix = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


@dataclass(frozen=True)
class Probes:
    """How many lists a query probes: `narrow` when its best list scores above `gate`, else `wide`."""

    narrow: int
    wide: int
    gate: float

    def for_query(self, best_list_score: float) -> int:
        return self.narrow if best_list_score > self.gate else self.wide


def calibration_queries(vectors: Matrix, seed: int = 0) -> dict[str, Matrix]:
    """The three kinds of query near the data, `QUERIES_PER_KIND` each (fewer for a tiny partition)."""
    rng = np.random.default_rng(seed)
    n, dim = vectors.shape
    m = min(QUERIES_PER_KIND, n)

    def drawn() -> Matrix:
        picked: Matrix = vectors[rng.integers(0, n, m)]
        return picked

    noise = rng.normal(0, _NEAR_NOISE / math.sqrt(dim), size=(m, dim))
    return {
        "near one memory": _normalised(drawn() + noise),
        "between two": _normalised(drawn() + drawn()),
        "among three": _normalised(drawn() + drawn() + drawn()),
    }


def nprobe_ladder(nlist: int) -> list[int]:
    """1, 2, 3, 4, 6, 8, 12, ... up to nlist: steps of about 1.5x, so the chosen nprobe
    overshoots the needed one by at most half (doubling overshot by up to 2x)."""
    ladder: set[int] = set()
    step = 1
    while step < nlist:
        ladder.update((step, step + step // 2))
        step *= 2
    return [*sorted(p for p in ladder if p < nlist), nlist]


def per_query_recall(found_scores: Matrix, found_ids: npt.NDArray[np.int64], kth_exact: Matrix) -> Matrix:
    """Each query's tie-aware recall@k: returned hits scoring at least the exact k-th best, over k."""
    good = (found_ids >= 0) & (found_scores >= kth_exact[:, None] - _TIE)
    out: Matrix = good.sum(axis=1).astype(np.float32) / found_scores.shape[1]
    return out


def meets_target(recalls: Matrix) -> bool:
    """Mean recall, less `_Z` standard errors of the mean, reaches `TARGET_RECALL`."""
    spread = float(np.std(recalls)) / math.sqrt(len(recalls)) if len(recalls) > 1 else 0.0
    return float(np.mean(recalls)) - _Z * spread >= TARGET_RECALL


def random_directions(count: int, dim: int, seed: int = 1) -> Matrix:
    return _normalised(np.random.default_rng(seed).standard_normal((count, dim)))


Search = Callable[[Matrix, int, int], tuple[Matrix, npt.NDArray[np.int64]]]
"""(queries, k, nprobe) -> (scores, ids): the partition's whole search at that nprobe."""


def _smallest_meeting(search: Search, nlist: int, kinds: dict[str, Matrix], kth: dict[str, Matrix], k: int) -> int:
    for nprobe in nprobe_ladder(nlist):
        if all(meets_target(per_query_recall(*search(q, k, nprobe), kth[name])) for name, q in kinds.items()):
            return nprobe
    return nlist


def choose_probes(ivf: faiss.IndexIVF, vectors: Matrix, search: Search | None = None) -> Probes:
    """The smallest nprobes on the ladder at which every kind of calibration query meets the target
    against exact search over `vectors` (the IVF's own, in any order); `ivf.nprobe` is left at
    `wide`, the safe one for a caller that does not gate. `search` is the partition's pipeline
    when it is more than `ivf.search` (codes re-ranked exactly): recall is measured on what a
    query gets, so its scores must be exact ones."""

    def plain(queries: Matrix, k: int, nprobe: int) -> tuple[Matrix, npt.NDArray[np.int64]]:
        ivf.nprobe = nprobe
        return ivf.search(queries, k)

    run = plain if search is None else search
    nlist = int(ivf.nlist)
    near = calibration_queries(vectors)
    far = random_directions(len(next(iter(near.values()))), vectors.shape[1])
    k = min(RECALL_K, len(vectors))
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(vectors)
    kth = {name: exact.search(queries, k)[0][:, -1] for name, queries in [*near.items(), ("random", far)]}
    narrow = _smallest_meeting(run, nlist, near, kth, k)
    wide = max(narrow, _smallest_meeting(run, nlist, {"random": far}, kth, k))
    gate = float(np.quantile(ivf.quantizer.search(far, 1)[0][:, 0], _GATE_QUANTILE))
    ivf.nprobe = wide
    return Probes(narrow, wide, gate)
