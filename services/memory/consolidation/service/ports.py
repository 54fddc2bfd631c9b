"""What the consolidation job is, and the ports it names (SQL, the per-user lock, metrics, a hook).

Plain data and Protocols only, like `ports.py`: the job's use case never imports SQLAlchemy, and
the adapters in `adapters/consolidation_repository.py` implement these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from types import TracebackType
from typing import Protocol

from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from services.memory.core.service.ports import MemoryUnitOfWork


class JobState(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED_BUSY = "skipped_busy"


class JobTrigger(StrEnum):
    OPERATOR = "operator"
    SCHEDULER = "scheduler"


class JobPhase(StrEnum):
    """Points of a running job a test can hold it at (the positions a turn can land in from outside)."""

    BEFORE_READ = "before_read"
    AFTER_READ = "after_read"
    AFTER_COMPUTE = "after_compute"
    WRITE_BACK = "write_back"  # inside the write-back transaction, planned, nothing applied yet
    BEFORE_COMMIT = "before_commit"  # every operation applied, not committed


@dataclass(frozen=True)
class ConsolidationJob:
    """One job's record: its figures are the write-back plan's, persisted with the write-back."""

    job_id: str
    tenant: str
    user: str
    state: JobState
    started_at: datetime
    trigger: JobTrigger = JobTrigger.OPERATOR
    requested_by: str = ""
    trace_id: str = ""
    snapshot_size: int = 0
    kept: int = 0
    retired: int = 0
    untouched: int = 0
    deferred: int = 0
    sent_to_review: int = 0
    error: str = ""
    finished_at: datetime | None = None

    def ended(self, state: JobState, *, now: datetime, error: str = "") -> ConsolidationJob:
        return replace(self, state=state, error=error, finished_at=now)


@dataclass(frozen=True)
class LiveState:
    """A snapshot record as it is inside the write-back transaction (locked)."""

    status: MemoryStatus
    sources: frozenset[str]


@dataclass(frozen=True)
class DueUser:
    """A user with memories no completed job has read: how many, and when the last one arrived."""

    tenant: str
    user: str
    fresh: int
    last_new: datetime | None


class ConsolidationRepository(Protocol):
    """Consolidation's reads and writes inside one tenant-scoped unit of work."""

    def active_records(self, user: str) -> list[MemoryRecord]:
        """Every active record of `user` with its provenance, in one statement (one snapshot)."""
        ...

    def lock_live_state(self, user: str, memory_ids: Iterable[str]) -> dict[str, LiveState]:
        """Lock the rows (FOR UPDATE, in id order) and return their status and sources now."""
        ...

    def active_ids(self, user: str) -> frozenset[str]: ...
    def copy_provenance(self, groups: Mapping[str, Iterable[str]]) -> None:
        """Give each new version (key) the union of its members' sources, first arrival kept."""
        ...

    def copy_vectors(self, wordings: Mapping[str, str]) -> None:
        """Give each new version (key) the stored vectors of the member whose text it took."""
        ...

    def existing_review_keys(self, user: str, candidate_keys: Iterable[str]) -> frozenset[str]:
        """Which of `candidate_keys` already have a review item of `user` (in any state): one statement."""
        ...

    def add_job(self, job: ConsolidationJob) -> None: ...
    def save_job(self, job: ConsolidationJob) -> None: ...
    def record_snapshot(self, job_id: str, memory_ids: Iterable[str]) -> None: ...
    def get_job(self, job_id: str) -> ConsolidationJob | None: ...
    def running_job(self, user: str) -> ConsolidationJob | None: ...
    def abandon_running(self, user: str, *, error: str, now: datetime) -> list[str]: ...
    def page_jobs(self, user: str, *, before_seq: int, limit: int) -> list[tuple[int, ConsolidationJob]]: ...


class ConsolidationUnitOfWork(MemoryUnitOfWork, Protocol):
    """The memory unit of work plus consolidation's repository, on the same transaction."""

    @property
    def consolidation(self) -> ConsolidationRepository: ...

    def __enter__(self) -> ConsolidationUnitOfWork: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class JobSession(Protocol):
    """One job's dedicated database connection: it holds the user's lock for the job's whole life,
    and every transaction of the job runs on it, so losing the lock means losing the write-back."""

    def lock(self, *, wait_seconds: float) -> bool:
        """Take the user's lock; False when another job holds it (after `wait_seconds`, 0 = don't wait)."""
        ...

    def uow(self) -> ConsolidationUnitOfWork: ...


JobSessionFactory = Callable[[str, str], AbstractContextManager[JobSession]]
"""`(tenant, user)` → a context manager yielding the job's session; leaving it releases the lock."""

ConsolidationUowFactory = Callable[[str], ConsolidationUnitOfWork]


class ConsolidationActivity(Protocol):
    """The scheduler's cross-tenant reads (the maintenance scope of row-level security)."""

    def users_with_new_memories(self, after_row_id: int) -> tuple[list[tuple[str, str]], int]:
        """Users with memory rows past the watermark, and the new watermark."""
        ...

    def due_states(self, users: Sequence[tuple[str, str]]) -> list[DueUser]:
        """Each (tenant, user)'s memories since its last completed job, in `users` order, in one read."""
        ...

    def running_jobs(self, *, started_before: datetime) -> list[tuple[str, str]]: ...


class ConsolidationMetrics(Protocol):
    def job_finished(self, job: ConsolidationJob, seconds: float) -> None: ...
    def scheduler_running(self, running: bool) -> None:
        """Whether this process's scheduler loop runs: where jobs run is an operator's question."""
        ...


PhaseHook = Callable[[JobPhase, ConsolidationJob], None]
"""Called as the job reaches each `JobPhase`; production passes a no-op (tests may hold the job)."""


def no_pause(phase: JobPhase, job: ConsolidationJob) -> None:
    """The production hook: a job never waits for anyone."""
