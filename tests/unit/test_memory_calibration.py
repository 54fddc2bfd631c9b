"""The IVF partition's calibrated nprobe (issue 15): fresh queries, never seen by the calibration,
meet recall@10 ≥ 0.95 on Gaussian and clustered data, and the gate spends wide probes only on
queries that need them. Also: the per-type counts a type filter relies on stay right."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import faiss
import numpy as np
import pytest

from services.common.vocabulary import MemoryType
from services.memory.core.adapters import faiss_calibration
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.adapters.faiss_partition import Partition
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest


def _normalised(rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return out


def _clustered(n: int, dim: int, seed: int, spread: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    return _normalised(centres[rng.integers(0, 40, n)] + spread * rng.standard_normal((n, dim)))


def _gaussian(n: int, dim: int, seed: int) -> np.ndarray:
    return _normalised(np.random.default_rng(seed).standard_normal((n, dim)))


def _ivf(vectors: np.ndarray) -> Partition:
    partition = Partition.empty(vectors.shape[1])
    kinds = [MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EPISODE]
    partition.add(np.arange(len(vectors), dtype=np.int64), vectors, [kinds[i % 3] for i in range(len(vectors))])
    partition.rebuild()
    assert partition.approximate and partition.probes is not None
    return partition


def _recall(partition: Partition, vectors: np.ndarray, queries: np.ndarray) -> float:
    found = 0
    for query in queries:
        truth = set(np.argsort(-(vectors @ query))[:10].tolist())
        found += len(truth & {r for r, _ in partition.search(query[None], 10, frozenset())})
    return found / (10 * len(queries))


DATA = {
    # (stored vectors, fresh queries): queries from other seeds, so never a calibration query
    "gaussian, gaussian queries": (_gaussian(4_000, 32, 1), _gaussian(150, 32, 2)),
    "clusters, queries on the same clusters": (_clustered(4_000, 32, 3, 0.3), _clustered(4_150, 32, 3, 0.3)[-150:]),
    "clusters, queries on new clusters": (_clustered(4_000, 32, 3, 0.3), _clustered(150, 32, 5, 0.3)),
    "clusters in 256 dims, queries on new clusters": (
        _clustered(6_000, 256, 7, 1.0),
        _clustered(150, 256, 8, 1.0),
    ),
}


@pytest.mark.parametrize("name", DATA)
def test_fresh_queries_meet_the_recall_target(name: str) -> None:
    vectors, queries = DATA[name]
    partition = _ivf(vectors)
    assert _recall(partition, vectors, queries) >= faiss_calibration.TARGET_RECALL


def test_queries_near_the_data_probe_fewer_lists_than_random_directions() -> None:
    # Given: clustered data in many dimensions, where a random direction shares none of its structure
    vectors = _clustered(6_000, 256, 7, 1.0)
    partition = _ivf(vectors)
    probes = partition.probes
    assert probes is not None
    # Then: a query on the stored clusters is probed narrow, one on new clusters wide, narrow < wide
    near, far = _clustered(6_050, 256, 7, 1.0)[-50:], _clustered(50, 256, 8, 1.0)
    assert {partition._nprobe(q[None]) for q in near} == {probes.narrow}
    assert {partition._nprobe(q[None]) for q in far} == {probes.wide}
    assert probes.narrow < probes.wide < faiss.extract_index_ivf(partition.index).nlist
    # And near queries still meet the target at the narrow nprobe
    assert _recall(partition, vectors, near) >= faiss_calibration.TARGET_RECALL


def test_the_ladder_climbs_in_steps_of_about_one_and_a_half() -> None:
    assert faiss_calibration.nprobe_ladder(100) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 100]


def _counts_match(partition: Partition) -> bool:
    return partition.type_counts == Counter(partition.types.values())


def test_type_counts_follow_adds_removes_retyping_rebuilds_and_a_reload(tmp_path: Path) -> None:
    vectors = _clustered(3_000, 32, 3, 0.3)
    index = FaissVectorIndex(tmp_path, 32)
    kinds = (MemoryType.FACT, MemoryType.PREFERENCE)
    index.apply([IndexedChange(i + 1, f"m{i + 1}", "acme", "u", kinds[i % 2], True, v) for i, v in enumerate(vectors)])
    partition = index._tenants["acme"].partitions["u"]
    assert partition.type_counts == {MemoryType.FACT: 1_500, MemoryType.PREFERENCE: 1_500}
    partition.rebuild()
    assert partition.approximate and _counts_match(partition)

    # every fact leaves: a fact filter finds nothing, a fact-or-preference filter is no filter
    index.apply([IndexedChange(i, f"m{i}", "acme", "u", MemoryType.FACT, False, None) for i in range(1, 3_001, 2)])
    assert partition.type_counts == {MemoryType.PREFERENCE: 1_500} and _counts_match(partition)
    assert index.search("acme", "u", vectors[1], 10, frozenset({MemoryType.FACT})) == []
    assert index.search("acme", "u", vectors[1], 10, frozenset({MemoryType.FACT, MemoryType.PREFERENCE})) == (
        index.search("acme", "u", vectors[1], 10, frozenset())
    )
    # a preference comes back as an episode (its row re-added with another type)
    index.apply([IndexedChange(2, "m2", "acme", "u", MemoryType.EPISODE, True, vectors[1])])
    assert partition.type_counts == {MemoryType.PREFERENCE: 1_499, MemoryType.EPISODE: 1} and _counts_match(partition)
    assert [r for r, _ in index.search("acme", "u", vectors[1], 10, frozenset({MemoryType.EPISODE}))] == [2]

    # persisted and loaded: the counts and the calibrated probes come back
    index.save(IndexManifest("db", "e", 32, FeedCursor(1, 1), vectors=1_500))
    loaded = FaissVectorIndex(tmp_path, 32)
    assert loaded.load(database_id="db", embedder="e", dim=32) is not None
    again = loaded._tenants["acme"].partitions["u"]
    assert again.type_counts == partition.type_counts and again.probes == partition.probes is not None
