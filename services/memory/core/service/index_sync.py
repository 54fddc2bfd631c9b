"""Keeps this replica's vector indexes equal to the database's active memories, and what follows a commit.

The third of the four files a forget passes through on its way to FAISS (after the RPC and the
use case, before `core/adapters/faiss_index.py`). Every write to `memories` (store, supersede,
deprecate, forget) moves the change feed in the same transaction (a trigger of migration m0001
gives the row a fresh `change_seq` and its transaction id; `core/adapters/change_feed.py` reads
them without skipping), so one rule serves every capability: after the
commit, `AfterCommit.memories_changed` drops this replica's cached results, runs `catch_up`, which
applies the feed to the index (a deleted or inactive memory is removed, an active one added), and
tells peers, which run the same `catch_up` on the notice.

The database is the truth; the indexes are derived. A replica loads its persisted indexes and
their cursor at start (rebuilding from stored vectors when they are missing or were built from
something else), then applies the change feed: after each local commit, when a peer's change
notice arrives, and on a periodic poll that catches anything a lost notice would have missed.
Nothing here re-embeds a memory unless its vector for the configured embedder is missing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence

from services.memory.core.service.ports import (
    ChangeFeed,
    Embedder,
    FeedCursor,
    IndexedChange,
    IndexManifest,
    MemoryMetrics,
    Notices,
    RetrievalCache,
    Vector,
    VectorIndex,
)

_log = logging.getLogger(__name__)


class IndexSynchroniser:
    """Applies the change feed to one replica's indexes; every method is thread-safe."""

    def __init__(
        self,
        feed: ChangeFeed,
        index: VectorIndex,
        embedder: Embedder,
        cache: RetrievalCache,
        metrics: MemoryMetrics,
        *,
        replica_id: str,
    ) -> None:
        self._feed = feed
        self._index = index
        self._embedder = embedder
        self._cache = cache
        self._metrics = metrics
        self.replica_id = replica_id
        self._lock = threading.Lock()
        self._cursor = FeedCursor(seq=0, xmin=0)
        self._database_id = ""
        self._dirty = False

    @property
    def watermark(self) -> int:
        """The highest change sequence this replica has applied."""
        return self._cursor.seq

    def start(self) -> str:
        """Load the persisted indexes or rebuild them, then catch up; returns "disk" or "database"."""
        with self._lock:
            self._database_id = self._feed.database_id()
            manifest = self._index.load(
                database_id=self._database_id, embedder=self._embedder.name, dim=self._embedder.dim
            )
            if manifest is None:
                source = "database"
                self._rebuild_locked()
            else:
                source = "disk"
                self._cursor = manifest.cursor
            loaded_at = self._cursor.seq
            applied = self._catch_up_locked()
            self._metrics.index_loaded(source)
            _log.info(
                "replica %s index loaded from %s at watermark %d; caught up %d changes to watermark %d (%d vectors)",
                self.replica_id,
                source,
                loaded_at,
                applied,
                self._cursor.seq,
                self._index.size(),
            )
            return source

    def catch_up(self) -> int:
        """Apply every change committed since the cursor; returns how many rows were applied."""
        with self._lock:
            return self._catch_up_locked()

    def persist(self, *, force: bool = False) -> bool:
        """Write the indexes and cursor to disk if anything changed since the last write.

        `force` writes a new generation regardless (a deletion's replica step: the files on disk
        are then known to be a copy of an index that no longer holds the deleted rows).
        """
        with self._lock:
            if not self._dirty and not force:
                return False
            self._index.save(
                IndexManifest(
                    database_id=self._database_id,
                    embedder=self._embedder.name,
                    dim=self._embedder.dim,
                    cursor=self._cursor,
                    vectors=self._index.size(),
                )
            )
            self._dirty = False
            _log.info("replica %s index persisted at watermark %d", self.replica_id, self._cursor.seq)
            return True

    def holds(self, tenant: str, row_ids: Sequence[int]) -> list[int]:
        """Which of `row_ids` this replica's index of `tenant` still holds."""
        return self._index.holds(tenant, row_ids)

    def _rebuild_locked(self) -> None:
        self._index.reset()
        changes, cursor = self._feed.snapshot(self._embedder.name)
        self._index.apply(self._with_vectors(changes))
        self._cursor = cursor
        self._dirty = True
        self._metrics.index_state(self._index.size(), cursor.seq)

    def _catch_up_locked(self) -> int:
        changes, cursor = self._feed.changes_since(self._cursor, self._embedder.name)
        if changes:
            self._index.apply(self._with_vectors(changes))
            for tenant, user in {(c.tenant, c.user) for c in changes}:
                self._cache.invalidate(tenant, user)
            self._dirty = True
        self._cursor = FeedCursor(seq=max(self._cursor.seq, cursor.seq), xmin=cursor.xmin)
        self._metrics.index_state(self._index.size(), self._cursor.seq)
        return len(changes)

    def _with_vectors(self, changes: list[IndexedChange]) -> list[IndexedChange]:
        missing = [c for c in changes if c.active and c.vector is None]
        if not missing:
            return changes
        vectors = self._embedder.embed([c.text for c in missing], kind="document")
        pairs: list[tuple[IndexedChange, Vector]] = [(c, vectors[i]) for i, c in enumerate(missing)]
        self._feed.store_vectors(self._embedder.name, pairs)
        # Counted here, not by the embedder: its cache can answer for a text embedded moments ago
        # (FindConflicts'), so memloop_embedded_texts_total alone would not show a lost vector copy.
        self._metrics.vectors_filled(len(pairs))
        filled = {c.row_id: v for c, v in pairs}
        return [
            IndexedChange(c.row_id, c.memory_id, c.tenant, c.user, c.type, c.active, filled[c.row_id], c.text)
            if c.row_id in filled
            else c
            for c in changes
        ]


class AfterCommit:
    """The `Effects` port of every capability: one object per replica, built by bootstrap."""

    def __init__(self, sync: IndexSynchroniser, cache: RetrievalCache, notices: Notices) -> None:
        self._sync = sync
        self._cache = cache
        self._notices = notices

    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None:
        """Refresh local indexes (read-your-writes on this replica), drop cached results, tell peers."""
        for user in set(users):
            self._cache.invalidate(tenant, user)
        try:
            self._sync.catch_up()
        except Exception:
            _log.exception("index catch-up after commit failed; the periodic poll will retry")
        if memory_ids:
            self._notices.memory_changed(tenant, memory_ids, self._sync.watermark)

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        self._notices.review_created(tenant, user, review_item_id, event_id)
