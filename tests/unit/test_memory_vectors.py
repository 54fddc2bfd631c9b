"""The FAISS index adapter, the hashing embedder and the retrieval cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.cache import LruRetrievalCache
from services.memory.core.adapters.embedders import HashingEmbedder
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.service.ports import FeedCursor, IndexedChange, IndexManifest, Vector

EMBEDDER = HashingEmbedder()


def _change(row_id: int, text: str, *, user: str = "alice", tenant: str = "acme", active: bool = True) -> IndexedChange:
    kind = MemoryType.FACT if "fact" in text else MemoryType.PREFERENCE
    return IndexedChange(
        row_id, f"m{row_id}", tenant, user, kind, active, EMBEDDER.embed([text])[0] if active else None
    )


def _query(text: str) -> Vector:
    return np.asarray(EMBEDDER.embed([text])[0], dtype=np.float32)


def test_hashing_embedder_is_deterministic_normalised_and_lexical() -> None:
    vectors = EMBEDDER.embed(["meetings after 09:00", "meetings after 09:00", "forward every invoice"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.array_equal(vectors[0], vectors[1])
    query = _query("schedule meetings")
    assert float(vectors[0] @ query) > float(vectors[2] @ query)


def test_search_ranks_only_the_callers_active_records_of_the_asked_types(tmp_path: Path) -> None:
    index = FaissVectorIndex(tmp_path, EMBEDDER.dim)
    index.apply(
        [
            _change(1, "meetings after 10:00"),
            _change(2, "meetings after 09:00"),
            _change(3, "fact: meetings happen in Lisbon"),
            _change(4, "meetings after 08:00", user="bob"),
            _change(5, "meetings after 07:00", tenant="globex"),
        ]
    )
    # a supersession: row 1 becomes inactive
    index.apply([_change(1, "meetings after 10:00", active=False)])
    hits = index.search("acme", "alice", _query("meetings after 09:00"), 10, frozenset())
    assert [row_id for row_id, _ in hits][:1] == [2] and {r for r, _ in hits} == {2, 3}
    assert [r for r, _ in index.search("acme", "alice", _query("meetings"), 10, frozenset({MemoryType.FACT}))] == [3]
    assert index.search("acme", "nobody", _query("meetings"), 10, frozenset()) == []
    assert index.search("initech", "alice", _query("meetings"), 10, frozenset()) == []
    assert index.size() == 4


def test_applying_the_same_state_twice_changes_nothing(tmp_path: Path) -> None:
    index = FaissVectorIndex(tmp_path, EMBEDDER.dim)
    changes = [_change(1, "a b c"), _change(2, "d e f")]
    index.apply(changes)
    index.apply(changes)
    assert index.size() == 2


def test_persisted_generation_loads_back_identically_and_refuses_a_foreign_manifest(tmp_path: Path) -> None:
    index = FaissVectorIndex(tmp_path, EMBEDDER.dim)
    index.apply([_change(i, f"memory number {i}", user=f"u{i % 3}") for i in range(1, 30)])
    before = [index.search("acme", f"u{u}", _query("memory number 7"), 5, frozenset()) for u in range(3)]
    manifest = IndexManifest("db-1", EMBEDDER.name, EMBEDDER.dim, FeedCursor(seq=42, xmin=40), vectors=29)
    index.save(manifest)
    index.save(manifest)  # a second generation replaces the first
    assert len(list(tmp_path.glob("gen-*"))) == 1
    loaded = FaissVectorIndex(tmp_path, EMBEDDER.dim)
    assert loaded.load(database_id="db-1", embedder=EMBEDDER.name, dim=EMBEDDER.dim) == manifest
    assert [loaded.search("acme", f"u{u}", _query("memory number 7"), 5, frozenset()) for u in range(3)] == before
    assert loaded.load(database_id="db-2", embedder=EMBEDDER.name, dim=EMBEDDER.dim) is None
    assert loaded.load(database_id="db-1", embedder="other-model", dim=EMBEDDER.dim) is None


@pytest.mark.parametrize("damage", ["missing-dir", "corrupt-faiss", "corrupt-manifest"])
def test_damaged_files_mean_rebuild_not_a_crash(tmp_path: Path, damage: str) -> None:
    index = FaissVectorIndex(tmp_path, EMBEDDER.dim)
    index.apply([_change(1, "x y z")])
    index.save(IndexManifest("db", EMBEDDER.name, EMBEDDER.dim, FeedCursor(1, 1)))
    generation = next(tmp_path.glob("gen-*"))
    if damage == "missing-dir":
        index.clear_files()
    elif damage == "corrupt-faiss":
        next(generation.glob("*.faiss")).write_bytes(b"not an index")
    else:
        (tmp_path / "manifest.json").write_text(json.dumps({"database_id": "db"}))
    assert FaissVectorIndex(tmp_path, EMBEDDER.dim).load(database_id="db", embedder=EMBEDDER.name, dim=384) is None


def test_cache_is_lru_and_invalidates_one_user_only() -> None:
    cache = LruRetrievalCache(capacity=2)
    cache.put(("q1",), "acme", "alice", [(1, 0.5)])
    cache.put(("q2",), "acme", "bob", [(2, 0.5)])
    assert cache.get(("q1",)) == [(1, 0.5)]
    cache.put(("q3",), "acme", "alice", [(3, 0.5)])  # evicts q2, the least recently used
    assert cache.get(("q2",)) is None
    cache.invalidate("acme", "alice")
    assert len(cache) == 0


def test_hits_found_before_an_invalidation_are_not_cached_after_it() -> None:
    # Given: a search read alice's stamp and searched the index
    cache = LruRetrievalCache(capacity=8, stamps=2)
    stamp = cache.stamp("acme", "alice")
    # When: a write of alice's is applied before the search offers its (now stale) hits
    cache.invalidate("acme", "alice")
    cache.put(("q",), "acme", "alice", [(1, 0.5)], stamp=stamp)
    # Then: they are not kept; hits offered with the current stamp are
    assert cache.get(("q",)) is None
    cache.put(("q",), "acme", "alice", [(2, 0.5)], stamp=cache.stamp("acme", "alice"))
    assert cache.get(("q",)) == [(2, 0.5)]
    # And once alice's stamp is forgotten (bounded), an old stamp is still refused
    old = cache.stamp("acme", "alice")
    cache.invalidate("acme", "alice")
    cache.invalidate("acme", "bob")
    cache.invalidate("acme", "carol")  # evicts alice's stamp
    cache.put(("q2",), "acme", "alice", [(3, 0.5)], stamp=old)
    assert cache.get(("q2",)) is None
