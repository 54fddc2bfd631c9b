"""In-memory implementations of the memory ports, for unit tests (the stub-broker idea).

`InMemoryChangeFeed` obeys the same contract as `SqlChangeFeed` (tests/integration/
test_memory_change_feed.py runs one suite over both); the others record what they are told.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from services.memory.core.service.ports import FeedCursor, IndexedChange, Vector


class InMemoryChangeFeed:
    """Rows keyed by row id; every `write` takes the next sequence and is committed at once."""

    def __init__(self, database_id: str = "in-memory") -> None:
        self._database_id = database_id
        self._rows: dict[int, tuple[int, IndexedChange]] = {}
        self._vectors: dict[tuple[str, str], Vector] = {}
        self._seq = 0
        self._lock = threading.Lock()
        self.stored_vectors = 0

    def write(self, change: IndexedChange, *, embedder: str) -> int:
        """Insert or update a row (its vector, when given, stored for `embedder`); returns its sequence."""
        with self._lock:
            self._seq += 1
            if change.vector is not None:
                self._vectors[(change.memory_id, embedder)] = change.vector
            self._rows[change.row_id] = (self._seq, replace(change, vector=None))
            return self._seq

    def database_id(self) -> str:
        return self._database_id

    def snapshot(self, embedder: str) -> tuple[list[IndexedChange], FeedCursor]:
        with self._lock:
            rows = [self._view(c, embedder) for _, c in self._rows.values() if c.active]
            return rows, FeedCursor(seq=self._seq, xmin=self._seq + 1)

    def changes_since(self, cursor: FeedCursor, embedder: str) -> tuple[list[IndexedChange], FeedCursor]:
        with self._lock:
            rows = [self._view(c, embedder) for seq, c in self._rows.values() if seq > cursor.seq]
            return rows, FeedCursor(seq=max(cursor.seq, self._seq), xmin=self._seq + 1)

    def store_vectors(self, embedder: str, rows: Sequence[tuple[IndexedChange, Vector]]) -> None:
        with self._lock:
            for change, vector in rows:
                if (change.memory_id, embedder) not in self._vectors:
                    self._vectors[(change.memory_id, embedder)] = vector
                    self.stored_vectors += 1

    def _view(self, change: IndexedChange, embedder: str) -> IndexedChange:
        vector = self._vectors.get((change.memory_id, embedder)) if change.active else None
        return replace(change, vector=vector, text="" if vector is not None or not change.active else change.text)


@dataclass
class RecordingNotices:
    changes: list[tuple[str, tuple[str, ...], int]] = field(default_factory=list)
    reviews: list[tuple[str, str, str, str]] = field(default_factory=list)

    def memory_changed(self, tenant: str, memory_ids: Sequence[str], change_seq: int) -> None:
        self.changes.append((tenant, tuple(memory_ids), change_seq))

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        self.reviews.append((tenant, user, review_item_id, event_id))


@dataclass
class RecordingMetrics:
    decisions: dict[str, int] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)
    loads: list[str] = field(default_factory=list)
    watermark: int = 0
    vectors: int = 0
    filled: int = 0
    repeats: int = 0
    retries: int = 0

    def decision_applied(self, outcome: str) -> None:
        self.decisions[outcome] = self.decisions.get(outcome, 0) + 1

    def event_repeated(self) -> None:
        self.repeats += 1

    def conflict_retried(self) -> None:
        self.retries += 1

    def retrieval_observed(self, seconds: float, cache_hit: bool) -> None:
        return None

    def texts_embedded(self, kind: str, count: int) -> None:
        self.embedded[kind] = self.embedded.get(kind, 0) + count

    def index_state(self, vectors: int, watermark: int) -> None:
        self.vectors, self.watermark = vectors, watermark

    def index_loaded(self, source: str) -> None:
        self.loads.append(source)

    def vectors_filled(self, count: int) -> None:
        self.filled += count
