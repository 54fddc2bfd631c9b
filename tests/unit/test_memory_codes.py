"""A large partition as IVF-PQ codes re-ranked from its float vectors (issue 15): removal by id,
persistence round trip, recall against exact search on clustered and hashing-embedder vectors,
and partitions persisted as IVFFlat before the codes still load, then turn into codes."""

from __future__ import annotations

import json
from pathlib import Path

import faiss
import numpy as np
import pytest

from services.common.vocabulary import MemoryType
from services.memory.core.adapters import faiss_partition
from services.memory.core.adapters.embedders import HashingEmbedder
from services.memory.core.adapters.faiss_calibration import TARGET_RECALL, Probes
from services.memory.core.adapters.faiss_index import FaissVectorIndex, _TenantIndex
from services.memory.core.adapters.faiss_partition import Partition
from services.memory.core.adapters.faiss_quantised import FloatStore, is_codes
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest

KINDS = (MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EPISODE)
WORDS = [
    "budget", "hiring", "offsite", "invoice", "roadmap", "security", "launch", "review", "audit", "Bob",
    "Carol", "Dan", "Erin", "Berlin", "Lisbon", "Osaka", "tea", "coffee", "weekly", "draft",
]  # fmt: skip


def _normalised(rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return out


def _clustered(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    return _normalised(centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, dim)))


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=5, replace=False)) + f" #{rng.integers(10**6)}" for _ in range(n)]


def _changes(vectors: np.ndarray, user: str = "u", first: int = 1) -> list[IndexedChange]:
    return [
        IndexedChange(first + i, f"m{first + i}", "acme", user, KINDS[i % 3], True, v) for i, v in enumerate(vectors)
    ]


def _large(tmp_path: Path, vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> FaissVectorIndex:
    monkeypatch.setattr(faiss_partition, "IVF_THRESHOLD", 1_000)
    index = FaissVectorIndex(tmp_path, vectors.shape[1])
    index.apply(_changes(vectors))
    partition = index._tenants["acme"].partitions["u"]
    assert is_codes(partition.index) and partition.floats is not None and partition.probes is not None
    return index


def _tie_aware_recall(index: FaissVectorIndex, vectors: np.ndarray, queries: np.ndarray) -> float:
    """Returned rows scoring at least the exact 10th best count (hashing vectors tie often)."""
    found = 0
    for query in queries:
        scores = vectors @ query
        tenth = float(np.sort(scores)[-10]) - 1e-5
        found += sum(1 for r, _ in index.search("acme", "u", query, 10, frozenset()) if scores[r - 1] >= tenth)
    return found / (10 * len(queries))


def test_codes_meet_the_recall_target_on_clustered_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = _clustered(4_000, 64, 3)
    index = _large(tmp_path, vectors, monkeypatch)
    assert _tie_aware_recall(index, vectors, _clustered(4_150, 64, 3)[-150:]) >= TARGET_RECALL
    assert _tie_aware_recall(index, vectors, _clustered(150, 64, 9)) >= TARGET_RECALL  # new clusters


def test_codes_meet_the_recall_target_on_hashing_embedder_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashingEmbedder(128)
    vectors = embedder.embed(_texts(5_000, 1))
    index = _large(tmp_path, vectors, monkeypatch)
    assert _tie_aware_recall(index, vectors, embedder.embed(_texts(150, 2))) >= TARGET_RECALL
    # the scores a codes partition returns are the exact inner products, not the codes' estimates
    hits = index.search("acme", "u", vectors[7], 10, frozenset())
    assert all(abs(score - float(vectors[r - 1] @ vectors[7])) < 1e-5 for r, score in hits)


def test_codes_remove_by_id_and_take_rows_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = _clustered(3_000, 32, 4)
    index = _large(tmp_path, vectors, monkeypatch)
    partition = index._tenants["acme"].partitions["u"]
    # Given: the 20 rows nearest a query, removed in one batch
    before = [r for r, _ in index.search("acme", "u", vectors[0], 20, frozenset())]
    index.apply([IndexedChange(r, f"m{r}", "acme", "u", KINDS[0], False, None) for r in before])
    # Then: none is found again, by any query or filter, and the partition holds 20 fewer
    assert partition.index.ntotal == len(partition.types) == len(partition.floats or []) == 2_980
    for query in (vectors[0], *vectors[[r - 1 for r in before[:5]]]):
        for types in (frozenset(), frozenset({MemoryType.FACT})):
            assert not set(before) & {r for r, _ in index.search("acme", "u", query, 50, types)}
    # And a removed row that comes back (with another vector) is found by its new vector only
    back = before[0]
    index.apply([IndexedChange(back, f"m{back}", "acme", "u", MemoryType.EPISODE, True, vectors[2_999])])
    assert index.search("acme", "u", vectors[2_999], 2, frozenset({MemoryType.EPISODE}))[0][0] in {back, 3_000}
    assert back not in {r for r, _ in index.search("acme", "u", vectors[0], 10, frozenset())}
    # And the type filter admits only its type (row i holds KINDS[(i - 1) % 3])
    facts = index.search("acme", "u", vectors[5], 10, frozenset({MemoryType.FACT}))
    assert len(facts) == 10 and all((r - 1) % 3 == 0 for r, _ in facts)


def test_codes_persist_and_load_with_their_float_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = _clustered(3_000, 32, 5)
    index = _large(tmp_path, vectors, monkeypatch)
    index.apply([IndexedChange(9, "m9", "acme", "u", KINDS[2], False, None)])
    manifest = IndexManifest("db", "e", 32, FeedCursor(1, 1), vectors=2_999)
    index.save(manifest)
    loaded = FaissVectorIndex(tmp_path, 32)
    assert loaded.load(database_id="db", embedder="e", dim=32) == manifest
    again, partition = loaded._tenants["acme"].partitions["u"], index._tenants["acme"].partitions["u"]
    assert is_codes(again.index) and again.probes == partition.probes and again.floats is not None
    for query in _clustered(20, 32, 6):
        assert loaded.search("acme", "u", query, 10, frozenset()) == index.search("acme", "u", query, 10, frozenset())
    # the loaded partition still removes and snapshots (what a rebuild reads) exactly
    loaded.apply([IndexedChange(10, "m10", "acme", "u", KINDS[0], False, None)])
    _, ids, stored = again.snapshot()
    assert len(ids) == 2_998 and np.array_equal(stored, vectors[ids - 1])
    # a floats file that does not match its index is refused (the caller rebuilds from the database)
    generation = json.loads((tmp_path / "manifest.json").read_text())["generation"]
    (floats_file,) = (tmp_path / generation).glob("*.floats.npy")
    np.save(floats_file, vectors[:5])
    assert FaissVectorIndex(tmp_path, 32).load(database_id="db", embedder="e", dim=32) is None


def _legacy_ivfflat(ids: np.ndarray, vectors: np.ndarray) -> faiss.Index:
    """A large partition as persisted before the codes: IVFFlat with a hashtable direct map."""
    quantizer = faiss.IndexFlatIP(vectors.shape[1])
    ivf = faiss.IndexIVFFlat(quantizer, vectors.shape[1], 64, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
    ivf.add_with_ids(vectors, ids)
    ivf.nprobe = 16
    return ivf


def test_an_ivfflat_partition_persisted_before_the_codes_loads_serves_and_becomes_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given: a generation written by the previous code, with one IVFFlat partition (no floats file)
    monkeypatch.setattr(faiss_partition, "IVF_THRESHOLD", 1_000)
    vectors = _clustered(3_000, 32, 7)
    ids = np.arange(1, 3_001, dtype=np.int64)
    legacy = Partition(_legacy_ivfflat(ids, vectors), {int(i): KINDS[(i - 1) % 3] for i in ids}, 3_000)
    legacy.probes = Probes(8, 16, 0.5)
    old = FaissVectorIndex(tmp_path, 32)
    old._tenants = {"acme": _tenant_of(legacy)}
    old.save(IndexManifest("db", "e", 32, FeedCursor(1, 1), vectors=3_000))
    assert not list(tmp_path.glob("gen-*/*.floats.npy"))
    # When: the current code loads it
    index = FaissVectorIndex(tmp_path, 32)
    assert index.load(database_id="db", embedder="e", dim=32) is not None
    partition = index._tenants["acme"].partitions["u"]
    # Then: it serves as it did, and removes by id
    assert not is_codes(partition.index) and partition.approximate and partition.needs_rebuild
    top = index.search("acme", "u", vectors[0], 1, frozenset())[0][0]
    assert top == 1
    # And the next change of its tenant rebuilds it as codes, with every row but the removed one
    index.apply([IndexedChange(1, "m1", "acme", "u", KINDS[0], False, None)])
    partition = index._tenants["acme"].partitions["u"]
    assert is_codes(partition.index) and partition.floats is not None and len(partition.floats) == 2_999
    assert 1 not in {r for r, _ in index.search("acme", "u", vectors[0], 10, frozenset())}
    assert index.search("acme", "u", vectors[1], 1, frozenset())[0][0] == 2


def _tenant_of(partition: Partition) -> _TenantIndex:
    tenant = _TenantIndex(32, {"u": partition})
    tenant.owners.update((row_id, "u") for row_id in partition.types)
    return tenant


def test_the_float_store_reuses_removed_slots_and_grows() -> None:
    store = FloatStore(4)
    rows = np.eye(4, dtype=np.float32)
    store.add(np.array([10, 20, 30], dtype=np.int64), rows[:3])
    store.remove([20])
    store.add(np.array([40], dtype=np.int64), rows[3:])
    assert len(store) == 3 and np.array_equal(store.get([40, 10, 30]), rows[[3, 0, 2]])
    many = np.ones((5_000, 4), dtype=np.float32)
    store.add(np.arange(100, 5_100, dtype=np.int64), many)
    assert len(store) == 5_003 and np.array_equal(store.get([10, 5_099]), np.stack([rows[0], many[0]]))


def test_a_float_store_made_of_rows_grows_past_them_and_refuses_repeated_ids() -> None:
    rows = np.eye(4, dtype=np.float32)
    store = FloatStore.of(np.array([5, 6], dtype=np.int64), rows[:2])
    store.add(np.array([7, 8], dtype=np.int64), rows[2:])
    assert np.array_equal(store.get([8, 5, 7, 6]), rows[[3, 0, 2, 1]])
    with pytest.raises(ValueError, match="distinct"):
        FloatStore.of(np.array([1, 1], dtype=np.int64), rows[:2])


def test_a_float_store_gathers_from_any_iterable_and_refuses_an_id_it_does_not_hold() -> None:
    """`get` takes the re-rank's candidates, a persisted partition's dict of types, or nothing."""
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    store = FloatStore.of(np.array([7, 8, 9], dtype=np.int64), rows)
    assert np.array_equal(store.get({9: "x", 7: "y"}), rows[[2, 0]])
    assert np.array_equal(store.get(iter(np.array([8, 8], dtype=np.int64).tolist())), rows[[1, 1]])
    assert store.get([]).shape == (0, 4) and store.get([]).dtype == np.float32
    store.remove([8])
    with pytest.raises(KeyError):
        store.get([7, 8])


def test_a_float_store_finds_every_row_through_adds_removals_and_compactions() -> None:
    """The sorted lookup, the rows added since it was made, and a row removed and added again (a
    new slot, its old sorted entry gone) all gather the vector last added for the row; a removed
    row is refused. Checked against a plain dict over enough churn to compact several times."""
    rng = np.random.default_rng(3)
    ids = rng.choice(10**9, size=3_000, replace=False).astype(np.int64)
    expected = {int(i): rng.standard_normal(4).astype(np.float32) for i in ids[:2_000]}
    store = FloatStore.of(np.array(list(expected), dtype=np.int64), np.stack(list(expected.values())))
    for step in range(30):
        held = np.array(list(expected), dtype=np.int64)
        gone = rng.choice(held, size=60, replace=False).tolist()
        store.remove(gone)
        for row_id in gone:
            del expected[row_id]
        back = gone[:20] + rng.choice(ids, size=80).tolist()  # some removed just now come back
        added = {int(i): rng.standard_normal(4).astype(np.float32) for i in back}
        store.add(np.array(list(added), dtype=np.int64), np.stack(list(added.values())))
        expected.update(added)
        asked = rng.permutation(np.array(list(expected), dtype=np.int64))[:300]
        assert np.array_equal(store.get(asked), np.stack([expected[int(i)] for i in asked])), step
        assert len(store) == len(expected)
        absent = next(row_id for row_id in gone if row_id not in expected)
        with pytest.raises(KeyError):
            store.get(np.array([absent], dtype=np.int64))
