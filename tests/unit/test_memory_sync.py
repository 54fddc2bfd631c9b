"""IndexSynchroniser over the in-memory change feed: load, rebuild, catch up, persist, no re-embedding."""

from __future__ import annotations

from pathlib import Path

from services.common.vocabulary import MemoryType
from services.memory.core.adapters.cache import LruRetrievalCache
from services.memory.core.adapters.embed_batcher import BatchingEmbedder
from services.memory.core.adapters.embedders import HashingEmbedder
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.adapters.in_memory import InMemoryChangeFeed, RecordingMetrics
from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.core.service.ports import IndexedChange

EMBEDDER = HashingEmbedder()


class _Replica:
    def __init__(self, feed: InMemoryChangeFeed, directory: Path) -> None:
        self.index = FaissVectorIndex(directory, EMBEDDER.dim)
        self.cache = LruRetrievalCache()
        self.metrics = RecordingMetrics()
        # as memory wires it: the batching embedder counts the texts the model ran on
        self.embedder = BatchingEmbedder(EMBEDDER, on_embedded=self.metrics.texts_embedded)
        self.sync = IndexSynchroniser(feed, self.index, self.embedder, self.cache, self.metrics, replica_id="r1")

    def search(self, user: str, text: str) -> list[int]:
        query = EMBEDDER.embed([text])[0]
        return [row_id for row_id, _ in self.index.search("acme", user, query, 10, frozenset())]


def _write(feed: InMemoryChangeFeed, row_id: int, text: str, *, active: bool = True, vector: bool = True) -> None:
    change = IndexedChange(
        row_id=row_id,
        memory_id=f"m{row_id}",
        tenant="acme",
        user="alice",
        type=MemoryType.PREFERENCE,
        active=active,
        vector=EMBEDDER.embed([text])[0] if vector else None,
        text=text,
    )
    feed.write(change, embedder=EMBEDDER.name)


def test_first_start_rebuilds_then_catch_up_applies_additions_and_removals(tmp_path: Path) -> None:
    feed = InMemoryChangeFeed()
    _write(feed, 1, "meetings after 10:00")
    replica = _Replica(feed, tmp_path)
    assert replica.sync.start() == "database"
    assert replica.search("alice", "meetings") == [1]
    # When: the preference is superseded by another writer and this replica catches up
    replica.cache.put(("q",), "acme", "alice", [(1, 1.0)])
    _write(feed, 1, "meetings after 10:00", active=False)
    _write(feed, 2, "meetings after 09:00")
    assert replica.sync.catch_up() == 2
    # Then: only the new record is indexed, the user's cached hits are gone, and the watermark moved
    assert replica.search("alice", "meetings") == [2]
    assert replica.cache.get(("q",)) is None
    assert replica.sync.watermark == 3 == replica.metrics.watermark
    assert replica.sync.catch_up() == 0


def test_restart_loads_from_disk_and_embeds_nothing(tmp_path: Path) -> None:
    feed = InMemoryChangeFeed()
    for row_id in range(1, 6):
        _write(feed, row_id, f"preference number {row_id}")
    first = _Replica(feed, tmp_path)
    first.sync.start()
    assert first.sync.persist() and not first.sync.persist()  # nothing new: no second write
    _write(feed, 6, "written while the replica was down")
    # When: a new process starts from the persisted files
    second = _Replica(feed, tmp_path)
    # Then: it loaded from disk, caught up the one missed row, and embedded nothing
    assert second.sync.start() == "disk"
    assert second.metrics.embedded == {} and second.index.size() == 6
    first.sync.catch_up()
    assert second.search("alice", "preference number 3") == first.search("alice", "preference number 3")
    assert second.metrics.loads == ["disk"]


def test_rows_without_a_vector_for_this_embedder_are_embedded_once_and_stored(tmp_path: Path) -> None:
    # Given: rows written under another embedder (no vector for this one)
    feed = InMemoryChangeFeed()
    _write(feed, 1, "meetings after 09:00", vector=False)
    _write(feed, 2, "replies short", vector=False)
    replica = _Replica(feed, tmp_path / "a")
    replica.sync.start()
    assert replica.metrics.embedded == {"document": 2} and feed.stored_vectors == 2
    # When: another replica rebuilds from the same feed
    other = _Replica(feed, tmp_path / "b")
    other.sync.start()
    # Then: it found the stored vectors and embedded nothing
    assert other.metrics.embedded == {} and other.search("alice", "meetings") == replica.search("alice", "meetings")
    assert replica.metrics.filled == 2 and other.metrics.filled == 0


def test_a_row_whose_vector_was_lost_is_counted_even_when_the_embedder_cache_answers(tmp_path: Path) -> None:
    # Given: a running replica whose embedder embedded a text moments ago (as FindConflicts does
    # before the text is stored), so the text's vector is in the embedder's cache
    feed = InMemoryChangeFeed()
    replica = _Replica(feed, tmp_path)
    replica.sync.start()
    replica.embedder.embed(["dinner at eight"], kind="query")
    embedded_before = dict(replica.metrics.embedded)
    # When: that text is stored without its vector (a write that lost its copy) and the replica catches up
    _write(feed, 7, "dinner at eight", vector=False)
    assert replica.sync.catch_up() == 1
    # Then: the model ran on nothing new, yet the fill is counted, stored, and the memory is found
    assert replica.metrics.embedded == embedded_before
    assert replica.metrics.filled == 1 and feed.stored_vectors == 1
    assert replica.search("alice", "dinner at eight") == [7]
