"""The per-(tenant, user) index (issue 15): exact while small, IVF past the threshold, with
removal, type filters, persistence and recall kept."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from services.common.vocabulary import MemoryType
from services.memory.core.adapters import faiss_partition
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest

DIM = 32


def _vectors(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM)).astype(np.float32)
    rows = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, DIM)).astype(np.float32)
    normalised: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normalised


def _changes(vectors: np.ndarray, user: str, first: int = 1) -> list[IndexedChange]:
    kinds = (MemoryType.FACT, MemoryType.PREFERENCE)
    return [
        IndexedChange(first + i, f"m{first + i}", "acme", user, kinds[i % 2], True, v) for i, v in enumerate(vectors)
    ]


def test_a_large_users_partition_turns_ivf_keeps_recall_and_the_others_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(faiss_partition, "IVF_THRESHOLD", 1_000)
    big, small = _vectors(3_000), _vectors(50, seed=4)
    index = FaissVectorIndex(tmp_path, DIM)
    index.apply(_changes(big, "whale"))
    index.apply(_changes(small, "minnow", first=10_000))
    partitions = index._tenants["acme"].partitions
    assert partitions["whale"].approximate and not partitions["minnow"].approximate

    queries = _vectors(100, seed=5)
    found = 0
    for query in queries:
        truth = set((np.argsort(-(big @ query))[:10] + 1).tolist())
        found += len(truth & {r for r, _ in index.search("acme", "whale", query, 10, frozenset())})
    assert found / 1000 >= 0.95

    # a user's query never reaches another user's partition
    assert {r for r, _ in index.search("acme", "minnow", queries[0], 10, frozenset())} <= set(range(10_000, 10_050))
    # removal and the type filter work on the IVF partition
    top = index.search("acme", "whale", big[0], 1, frozenset())[0][0]
    index.apply([IndexedChange(top, f"m{top}", "acme", "whale", MemoryType.FACT, False, None)])
    assert top not in {r for r, _ in index.search("acme", "whale", big[0], 10, frozenset())}
    facts = index.search("acme", "whale", big[0], 10, frozenset({MemoryType.FACT}))
    assert facts and all(r % 2 == 1 for r, _ in facts)  # odd row ids are the facts
    assert index.size() == 3_049

    # persisted and loaded back: same kind of partition, same answers
    manifest = IndexManifest("db", "e", DIM, FeedCursor(1, 1), vectors=3_049)
    index.save(manifest)
    loaded = FaissVectorIndex(tmp_path, DIM)
    assert loaded.load(database_id="db", embedder="e", dim=DIM) == manifest
    assert loaded._tenants["acme"].partitions["whale"].approximate
    for query in queries[:10]:
        assert loaded.search("acme", "whale", query, 10, frozenset()) == index.search(
            "acme", "whale", query, 10, frozenset()
        )
    loaded.apply([IndexedChange(2, "m2", "acme", "whale", MemoryType.PREFERENCE, False, None)])
    assert loaded.size() == 3_048 and loaded.holds("acme", [2, 3]) == [3]


def test_forgetting_every_row_of_a_user_drops_the_partition_and_spares_the_others(tmp_path: Path) -> None:
    # Given: two users' partitions
    index = FaissVectorIndex(tmp_path, DIM)
    index.apply(_changes(_vectors(300), "gone") + _changes(_vectors(20, seed=6), "kept", first=1_000))
    # When: every row of one user leaves the active set in one batch, and one of them comes back
    forgotten = [
        IndexedChange(c.row_id, c.memory_id, "acme", "gone", c.type, False, None)
        for c in _changes(_vectors(300), "gone")
    ]
    back = _changes(_vectors(1, seed=7), "gone", first=5_000)
    index.apply(forgotten + back)
    # Then: none of the forgotten rows is held or found, the other user is untouched
    assert index.holds("acme", [c.row_id for c in forgotten]) == []
    assert {r for r, _ in index.search("acme", "gone", _vectors(1, seed=7)[0], 10, frozenset())} == {5_000}
    assert index.size() == 21 and len(index.search("acme", "kept", _vectors(1)[0], 50, frozenset())) == 20
    # And forgetting the last row removes the partition itself
    index.apply([IndexedChange(5_000, "m5000", "acme", "gone", MemoryType.FACT, False, None)])
    assert "gone" not in index._tenants["acme"].partitions


def _files(directory: Path) -> dict[str, int]:
    """Every file of the generation the manifest names, by name → inode."""
    generation = next(p for p in directory.glob("gen-*") if p.is_dir())
    return {f.name: f.stat().st_ino for f in generation.iterdir()}


def test_a_save_rewrites_only_the_partitions_that_changed_and_loads_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Learning touches a few users between saves: the others' files are linked from the previous
    generation (same inode), the changed one is written anew; a tenant with no change keeps its list."""
    monkeypatch.setattr(faiss_partition, "IVF_THRESHOLD", 1_000)
    index = FaissVectorIndex(tmp_path, DIM)
    index.apply(_changes(_vectors(1_500), "whale"))  # an IVF partition: index and floats files
    index.apply(_changes(_vectors(20, seed=4), "minnow", first=10_000))
    index.apply([IndexedChange(20_000, "o", "other", "solo", MemoryType.FACT, True, _vectors(1, seed=6)[0])])
    manifest = IndexManifest(database_id="db", embedder="e", dim=DIM, cursor=FeedCursor(seq=1, xmin=1), vectors=3)
    index.save(manifest)
    first = _files(tmp_path)

    index.apply(_changes(_vectors(5, seed=7), "minnow", first=10_100))
    index.save(manifest)
    second = _files(tmp_path)
    assert first.keys() == second.keys()
    changed = {name for name in first if first[name] != second[name]}
    minnow = {name for name in first if name.endswith(".faiss") and name in changed}
    assert len(minnow) == 1, changed  # minnow's index file only, among the partitions
    assert len([n for n in first if n.endswith(".floats.npy")]) == 1 and not any(n.endswith(".npy") for n in changed)
    assert sum(n.endswith(".partitions.json") for n in changed) == 1  # acme's list; other's is linked

    loaded = FaissVectorIndex(tmp_path, DIM)
    assert loaded.load(database_id="db", embedder="e", dim=DIM) == manifest
    for tenant, user in (("acme", "whale"), ("acme", "minnow"), ("other", "solo")):
        for query in _vectors(5, seed=8):
            assert loaded.search(tenant, user, query, 10, frozenset()) == index.search(
                tenant, user, query, 10, frozenset()
            )
    # the loaded index links too, and a file gone from under it is written again, not lost
    next(p for p in tmp_path.glob("gen-*") if p.is_dir()).joinpath(sorted(minnow)[0]).unlink()
    loaded.save(manifest)
    again = FaissVectorIndex(tmp_path, DIM)
    assert again.load(database_id="db", embedder="e", dim=DIM) == manifest
    assert again.size() == index.size() == 1_526


def test_what_a_save_remembers_of_a_partition_does_not_grow_the_collectors_work_per_vector(tmp_path: Path) -> None:
    """The index keeps each partition's listing entry for the next save's links; kept as parsed
    [row id, type] pairs, a million vectors were a million lists every full collection walked."""
    index = FaissVectorIndex(tmp_path, DIM)
    index.apply(_changes(_vectors(20_000), "whale"))
    manifest = IndexManifest(database_id="db", embedder="e", dim=DIM, cursor=FeedCursor(seq=1, xmin=1), vectors=1)
    gc.collect()
    before = len(gc.get_objects())
    index.save(manifest)
    gc.collect()
    assert len(gc.get_objects()) - before < 1_000
    loaded = FaissVectorIndex(tmp_path, DIM)
    loaded.load(database_id="db", embedder="e", dim=DIM)
    gc.collect()
    held = len(gc.get_objects())
    loaded.save(manifest)  # linked from the loaded generation: the same entries, written back intact
    gc.collect()
    assert len(gc.get_objects()) - held < 1_000
    again = FaissVectorIndex(tmp_path, DIM)
    assert again.load(database_id="db", embedder="e", dim=DIM) == manifest and again.size() == 20_000
