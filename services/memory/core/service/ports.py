"""The ports the memory use cases name; adapters implement them (SQL, FAISS, NATS, models).

Everything here is a Protocol or plain data, so the service layer never imports SQLAlchemy,
FAISS, nats-py or torch, and unit tests can hand it in-memory implementations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from services.common.vocabulary import Decision, MemoryType
from services.memory.core.domain.audit import AuditEntry, AuditEvent
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from services.memory.core.domain.review import ReviewItem, ReviewState
from services.memory.procedures.service.ports import ProcedureRepository

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class MemoryFilter:
    """ListMemories filters; empty collections and strings mean "any"."""

    user: str = ""
    statuses: frozenset[MemoryStatus] = frozenset()
    types: frozenset[MemoryType] = frozenset()
    intent_key: str = ""
    source_event_id: str = ""


@dataclass(frozen=True)
class CandidateRecord:
    """A decided candidate, kept with its text for audit and review (deletion scrubs it)."""

    candidate_id: str
    user: str
    ordinal: int
    decision: Decision
    memory_id: str = ""


class MemoryRepository(Protocol):
    def get(self, memory_id: str, *, lock: bool = False) -> MemoryRecord | None: ...
    def active_for_store(
        self, user: str, candidate_key: str, intent_key: str
    ) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        """(active record of the same candidate key, active record of the same intent key), both
        locked FOR UPDATE; None for an empty key or no such record."""
        ...

    def prefetch_active(self, keys: Sequence[tuple[str, str, str]]) -> None:
        """Lock and remember the active records of (user, candidate key, intent key) triples at once,
        for the `active_for_store` calls of a deferring unit of work (no-op otherwise)."""
        ...

    def add(self, record: MemoryRecord, *, with_source: bool = False) -> MemoryRecord:
        """Insert `record`; `with_source` also records its own event as its first source."""
        ...

    def set_status(
        self, memory_id: str, status: MemoryStatus, *, superseded_by: str | None, event_id: str, trace_id: str
    ) -> None: ...
    def set_supersedes(self, memory_id: str, supersedes: str | None) -> None: ...
    def mark_deleted(self, memory_ids: Sequence[str], *, event_id: str, trace_id: str) -> int:
        """Status `deleted` with text and candidate key scrubbed, for rows not deleted yet."""
        ...

    def add_source(self, memory_id: str, event_id: str, trace_id: str) -> bool: ...
    def restate(self, memory_id: str, stated_at: datetime) -> None: ...
    def add_vector(self, memory_id: str, embedder: str, vector: Vector) -> None: ...
    def active_by_row_ids(self, user: str, row_ids: Sequence[int]) -> list[MemoryRecord]: ...
    def active_by_intents(self, user: str, intent_keys: Sequence[str]) -> list[MemoryRecord]: ...
    def page(self, where: MemoryFilter, *, after_row_id: int, limit: int) -> list[MemoryRecord]: ...
    def chain(self, memory_id: str) -> list[MemoryRecord]: ...


class ActiveMemories(Protocol):
    """Retrieval's re-check: of `row_ids`, the rows still active and owned by the tenant's user, in
    the order of `row_ids`; of the `types` if any are named; the first `first` of them if given (a
    search over-fetches hits and returns k: the rest need not be read)."""

    def active_by_row_ids(
        self,
        tenant: str,
        user: str,
        row_ids: Sequence[int],
        *,
        types: frozenset[MemoryType] = frozenset(),
        first: int | None = None,
    ) -> list[MemoryRecord]: ...

    def active_for_conflicts(
        self, tenant: str, intents: Sequence[tuple[str, str]], hits: Sequence[tuple[str, int]]
    ) -> list[MemoryRecord]:
        """The tenant's active records of (user, intent key) pairs and of (user, row id) hits, any order."""
        ...

    def processed_among(self, tenant: str, event_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], datetime]]:
        """The processed ones among `event_ids`: (stored outcome, processed time) by event id."""
        ...


class CandidateRepository(Protocol):
    def add(self, record: CandidateRecord) -> None: ...


class ReviewRepository(Protocol):
    def add(self, item: ReviewItem) -> None: ...
    def get(self, review_item_id: str, *, lock: bool = False) -> ReviewItem | None: ...
    def save_resolution(self, item: ReviewItem, *, trace_id: str) -> None: ...
    def page(
        self, *, user: str, state: ReviewState | None, after_row_id: int, limit: int
    ) -> list[tuple[int, ReviewItem]]: ...


class AuditRepository(Protocol):
    def add(self, entry: AuditEntry) -> None: ...
    def page(self, *, event_id: str, memory_id: str, after_seq: int, limit: int) -> list[AuditEvent]: ...


class ProcessedEventRepository(Protocol):
    def get(self, event_id: str) -> tuple[dict[str, Any], datetime] | None: ...
    def get_many(self, event_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], datetime]]:
        """The processed ones among `event_ids`, by event id."""
        ...

    def record(self, event_id: str, *, user: str, trace_id: str, outcome: dict[str, Any]) -> None: ...
    def forgotten_by(self, user: str, event_time: datetime | None) -> str | None:
        """The user-scope deletion that covers an event of `user`: one still open, or one asked for
        after the event was committed; None when the event may be learned."""
        ...

    def forgotten_among(self, events: Sequence[tuple[str, datetime | None]]) -> list[str | None]:
        """`forgotten_by` for each (user, event time), in order, in one read."""
        ...


class RequestRepository(Protocol):
    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None: ...
    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None: ...


class MemoryUnitOfWork(Protocol):
    """One transaction scoped to one tenant (row-level security is set on entry).

    Rolls back unless `commit()` is called. A lost one-active race surfaces as
    SupersessionConflict from a write or from `commit()`; the caller retries the whole unit.
    """

    @property
    def memories(self) -> MemoryRepository: ...
    @property
    def candidates(self) -> CandidateRepository: ...
    @property
    def reviews(self) -> ReviewRepository: ...
    @property
    def audit(self) -> AuditRepository: ...
    @property
    def events(self) -> ProcessedEventRepository: ...
    @property
    def requests(self) -> RequestRepository: ...
    @property
    def procedures(self) -> ProcedureRepository: ...

    def __enter__(self) -> MemoryUnitOfWork: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    def commit(self) -> None: ...
    def lock(self, key: str) -> None:
        """Take a transaction-scoped exclusive lock on `key` (released at commit or rollback)."""
        ...

    def lock_many(self, keys: Sequence[str]) -> None:
        """`lock` each key in the order given; callers sort them, so two units cannot deadlock."""
        ...

    def begin_batch(
        self,
        lock_keys: Sequence[str],
        event_ids: Sequence[str],
        events: Sequence[tuple[str, datetime | None]],
        store_keys: Sequence[tuple[str, str, str]],
    ) -> tuple[dict[str, tuple[dict[str, Any], datetime]], list[str | None]]:
        """A learning batch's opening, in one go: `lock_many(lock_keys)`, then the processed ones
        among `event_ids` (`events.get_many`), the deletions of `events` (`events.forgotten_among`)
        and the active records of `store_keys` (`memories.prefetch_active`)."""
        ...

    def defer_appends(self) -> None:
        """Let append-only rows (candidates, review items, vectors, processed events, audit) be
        written as one multi-row statement per table at commit. Only for a use case that does not
        read those rows back before it commits (apply learning)."""
        ...


UnitOfWorkFactory = Callable[[str], MemoryUnitOfWork]


class Embedder(Protocol):
    """Text → L2-normalised float32 vectors; `name` identifies the model (stored with vectors).

    `kind` says what the texts are for: "document" (a memory's text, to store or index) or "query"
    (a search or conflict query). It changes no vector; it labels the model work an embedder that
    counts it reports (`BatchingEmbedder`: memloop_embedded_texts_total counts texts the model ran on).
    """

    @property
    def name(self) -> str: ...
    @property
    def dim(self) -> int: ...
    def embed(self, texts: Sequence[str], *, kind: str = "document") -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True)
class IndexedChange:
    """The current state of one memory row as the vector indexes need it."""

    row_id: int
    memory_id: str
    tenant: str
    user: str
    type: MemoryType
    active: bool
    vector: Vector | None
    text: str = ""


@dataclass(frozen=True)
class FeedCursor:
    """Where a replica is in the change feed: highest sequence applied and the snapshot horizon.

    `xmin` is the oldest transaction still running when the feed was last read; any row not seen
    then was written by a transaction at or after it, so the next read asks for those too.
    """

    seq: int
    xmin: int


class ChangeFeed(Protocol):
    """The memory rows' change feed, read across tenants (the maintenance scope)."""

    def database_id(self) -> str: ...
    def snapshot(self, embedder: str) -> tuple[list[IndexedChange], FeedCursor]: ...
    def changes_since(self, cursor: FeedCursor, embedder: str) -> tuple[list[IndexedChange], FeedCursor]: ...
    def store_vectors(self, embedder: str, rows: Sequence[tuple[IndexedChange, Vector]]) -> None: ...


@dataclass(frozen=True)
class IndexManifest:
    """What a persisted index was built from; a mismatch on load means rebuild."""

    database_id: str
    embedder: str
    dim: int
    cursor: FeedCursor
    vectors: int = 0


class VectorIndex(Protocol):
    """Derived per-tenant similarity indexes over active memories; the database stays the truth."""

    def apply(self, changes: Sequence[IndexedChange]) -> None: ...
    def reset(self) -> None: ...
    def search(
        self, tenant: str, user: str, query: Vector, k: int, types: frozenset[MemoryType]
    ) -> list[tuple[int, float]]: ...
    def size(self) -> int: ...
    def holds(self, tenant: str, row_ids: Sequence[int]) -> list[int]:
        """Which of `row_ids` the tenant's index still holds (a deletion's replica check)."""
        ...

    def save(self, manifest: IndexManifest) -> None: ...
    def load(self, *, database_id: str, embedder: str, dim: int) -> IndexManifest | None: ...


class RetrievalCache(Protocol):
    def get(self, key: tuple[Any, ...]) -> list[tuple[int, float]] | None: ...
    def stamp(self, tenant: str, user: str) -> int:
        """The user's invalidation stamp; a put made with an older one is dropped."""
        ...

    def put(
        self, key: tuple[Any, ...], tenant: str, user: str, hits: list[tuple[int, float]], *, stamp: int | None = None
    ) -> None: ...
    def invalidate(self, tenant: str, user: str) -> None: ...


class Notices(Protocol):
    """Best-effort, after-commit announcements (the database stays the truth; replicas also poll)."""

    def memory_changed(self, tenant: str, memory_ids: Sequence[str], change_seq: int) -> None: ...
    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None: ...


class Effects(Protocol):
    """What follows a commit, the one after-commit port of every memory capability (implemented by
    `index_sync.AfterCommit`): this replica's index and cache, then notices for peers and reviewers.
    Called only after the transaction committed; best-effort, because the database stays the truth."""

    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None: ...
    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None: ...


class MemoryMetrics(Protocol):
    def decision_applied(self, outcome: str) -> None: ...
    def event_repeated(self) -> None: ...
    def conflict_retried(self) -> None: ...
    def retrieval_observed(self, seconds: float, cache_hit: bool) -> None: ...
    def texts_embedded(self, kind: str, count: int) -> None: ...
    def index_state(self, vectors: int, watermark: int) -> None: ...
    def index_loaded(self, source: str) -> None: ...
    def vectors_filled(self, count: int) -> None:
        """Active memories the index found without a vector of this embedder, embedded and stored."""


@dataclass(frozen=True)
class Tuning:
    """Knobs of the use cases, from settings."""

    apply_attempts: int = 6
    conflict_similarity: float = 0.75
    search_overfetch: int = 4
    default_k: int = 5
    max_k: int = 100


@dataclass(frozen=True)
class Transition:
    """Who caused a write and under which event and trace; carried by every persisted transition."""

    event_id: str
    trace_id: str
    actor: str
    now: datetime
    extra: dict[str, Any] = field(default_factory=dict)
    # When the cause was stated (its event's commit); None means `now`.
    observed_at: datetime | None = None
