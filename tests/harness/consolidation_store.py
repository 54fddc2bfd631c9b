"""An in-memory store for consolidation, the job as interleavable steps, and a racing harness.

The store is the in-memory twin of the memory repository's apply side: it adds turns, lists the
active records and applies a `WriteBackPlan` through the same transition rule as everything else
(`model.superseded`, which refuses a record that is no longer active). Records are never mutated:
every transition stores a new object, so a snapshot taken earlier cannot change under the job.

`consolidation_job` is the job with its phases made visible: it yields before the read, after the
read, after the compute, once the write-back has begun and between its operations, so a harness
can land a turn at exactly that point. `race_turn` does that, `serialised_run` gives the store the
race must equal, and `race_every_position` walks a whole conversation through both. Used by the
unit tests and the benchmark; pure, no I/O. A test harness, not product code: the service never
runs the job this way (it lives in tests/ so it does not ship).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from services.common.errors import AlreadyExists
from services.memory.consolidation.domain.consolidation import (
    ConsolidationOutput,
    NewVersion,
    WriteBackPlan,
    WriteOperation,
    consolidate,
    plan_write_back,
    read_snapshot,
)
from services.memory.core.domain.model import MemoryRecord, MemoryStatus, deprecated, superseded


class WriteBackMode(StrEnum):
    MERGE = "merge"
    REPLACE = "replace"


class JobPhase(StrEnum):
    """Where a running job is when a turn lands.

    The compute is one pure call, so a turn "during compute" is modelled as landing after it
    returned and before the write-back starts: the compute cannot see it either way.
    """

    BEFORE_READ = "before_read"
    AFTER_READ = "after_read"
    DURING_COMPUTE = "during_compute"
    DURING_WRITE_BACK = "during_write_back"


class InMemoryMemoryStore:
    """One user's memories, every version kept; the apply side of consolidation."""

    def __init__(self, records: Iterable[MemoryRecord] = ()) -> None:
        self._records: dict[str, MemoryRecord] = {r.memory_id: r for r in records}

    def copy(self) -> InMemoryMemoryStore:
        return InMemoryMemoryStore(self._records.values())

    def add(self, record: MemoryRecord, *, now: datetime | None = None) -> None:
        """Store a turn's memory as active; like ApplyLearning, it supersedes the active record of
        the same non-empty intent key."""
        if record.memory_id in self._records:
            raise AlreadyExists(f"memory {record.memory_id} already exists")
        if record.intent_key:
            for old in self.all_active():
                if old.intent_key == record.intent_key and old.type is record.type:
                    self._records[old.memory_id] = superseded(old, by=record.memory_id, now=now or record.created_at)
                    record = dataclasses.replace(record, supersedes=old.memory_id)
        self._records[record.memory_id] = dataclasses.replace(record, status=MemoryStatus.ACTIVE)

    def deprecate(self, memory_id: str, *, now: datetime) -> None:
        """Retire without replacement (an owner's "forget that"); idempotent."""
        record = deprecated(self._records[memory_id], now=now)
        if record is not None:
            self._records[memory_id] = record

    def get(self, memory_id: str) -> MemoryRecord:
        return self._records[memory_id]

    def all_records(self) -> tuple[MemoryRecord, ...]:
        return tuple(sorted(self._records.values(), key=lambda r: r.memory_id))

    def all_active(self) -> tuple[MemoryRecord, ...]:
        return tuple(r for r in self.all_records() if r.status is MemoryStatus.ACTIVE)

    def active_ids(self) -> frozenset[str]:
        return frozenset(r.memory_id for r in self._records.values() if r.status is MemoryStatus.ACTIVE)

    def apply(self, plan: WriteBackPlan, *, now: datetime) -> None:
        """Apply every operation of a plan. In the database this is one transaction."""
        for operation in plan.operations():
            self.apply_operation(operation, now=now)

    def apply_operation(self, operation: WriteOperation, *, now: datetime) -> None:
        """One transition; raises MemoryNotActive if its target stopped being active."""
        if isinstance(operation, NewVersion):
            old = self._records[operation.supersedes]
            self._records[old.memory_id] = superseded(old, by=operation.record.memory_id, now=now)
            self._records[operation.record.memory_id] = operation.record
        else:
            old = self._records[operation.memory_id]
            self._records[old.memory_id] = superseded(old, by=operation.superseded_by, now=now)

    def replace(self, records: Sequence[MemoryRecord]) -> None:
        """The naive baseline's write: the store becomes exactly `records`."""
        self._records = {r.memory_id: r for r in records}


def consolidation_job(
    store: InMemoryMemoryStore, *, now: datetime, mode: WriteBackMode = WriteBackMode.MERGE, job_id: str = ""
) -> Generator[JobPhase, None, WriteBackPlan | None]:
    """Run one job, yielding at each point a turn could land; returns the merge plan it applied
    (None for the replace baseline, which has no report — that is the point of it)."""
    yield JobPhase.BEFORE_READ
    snapshot = read_snapshot(store.all_active())
    yield JobPhase.AFTER_READ
    output = consolidate(snapshot.memories)
    yield JobPhase.DURING_COMPUTE
    if mode is WriteBackMode.REPLACE:
        yield JobPhase.DURING_WRITE_BACK
        store.replace(replace_write_back(output))
        return None
    plan = plan_write_back(snapshot, output, store.active_ids(), job_id=job_id)
    yield JobPhase.DURING_WRITE_BACK  # begun: planned against the ids active now, nothing applied yet
    for position, operation in enumerate(plan.operations()):
        if position:
            yield JobPhase.DURING_WRITE_BACK
        store.apply_operation(operation, now=now)
    return plan


def run_job(
    store: InMemoryMemoryStore, *, now: datetime, mode: WriteBackMode = WriteBackMode.MERGE, job_id: str = ""
) -> WriteBackPlan | None:
    """Run one job to completion with nothing racing it."""
    steps = consolidation_job(store, now=now, mode=mode, job_id=job_id)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: WriteBackPlan | None = done.value
            return result


def race_turn(
    store: InMemoryMemoryStore,
    turn: MemoryRecord,
    phase: JobPhase,
    *,
    occurrence: int = 0,
    now: datetime,
    mode: WriteBackMode = WriteBackMode.MERGE,
) -> bool:
    """Run a job on `store` and land `turn` at the `occurrence`-th time the job reaches `phase`.

    Returns False when the job never got there (e.g. a write-back with fewer operations); the turn
    then lands after the job, which is the serialised order.
    """
    steps = consolidation_job(store, now=now, mode=mode)
    seen = 0
    landed = False
    for reached in steps:
        if reached is phase and not landed:
            if seen == occurrence:
                store.add(turn, now=now)
                landed = True
            seen += 1
    if not landed:
        store.add(turn, now=now)
    return landed


def serialised_run(
    store: InMemoryMemoryStore,
    turn: MemoryRecord,
    phase: JobPhase,
    *,
    now: datetime,
    mode: WriteBackMode = WriteBackMode.MERGE,
) -> None:
    """What the race must equal: the turn first if it landed before the read, else job then turn."""
    if phase is JobPhase.BEFORE_READ:
        store.add(turn, now=now)
        run_job(store, now=now, mode=mode)
    else:
        run_job(store, now=now, mode=mode)
        store.add(turn, now=now)


@dataclass(frozen=True)
class RaceCase:
    """One race: `turn` landed at `phase` (its `occurrence`-th time); both stores after it."""

    turn: MemoryRecord
    phase: JobPhase
    occurrence: int
    raced: InMemoryMemoryStore
    serialised: InMemoryMemoryStore

    def destroyed(self) -> tuple[str, ...]:
        """Memories live in the serialised run and not in the raced one."""
        live = self.raced.active_ids()
        return tuple(sorted(self.serialised.active_ids() - live))


def race_every_position(
    turns: Sequence[MemoryRecord], *, mode: WriteBackMode = WriteBackMode.MERGE
) -> Iterator[RaceCase]:
    """Race each turn against every position of the job the previous turn triggered.

    The history before turn k is the serialised conversation in which a job ran after every turn
    but the last, so the racing job has real work (the previous turn to merge or correct) and a
    write-back with operations to land between. Each case starts from a copy of that history.
    """
    history = InMemoryMemoryStore()
    for turn in turns:
        now = turn.created_at
        for phase, occurrence in _job_positions():
            raced, serialised = history.copy(), history.copy()
            if not race_turn(raced, turn, phase, occurrence=occurrence, now=now, mode=mode):
                break
            serialised_run(serialised, turn, phase, now=now, mode=mode)
            yield RaceCase(turn, phase, occurrence, raced, serialised)
        run_job(history, now=now, mode=mode)
        history.add(turn, now=now)


def _job_positions() -> Iterator[tuple[JobPhase, int]]:
    yield JobPhase.BEFORE_READ, 0
    yield JobPhase.AFTER_READ, 0
    yield JobPhase.DURING_COMPUTE, 0
    yield from ((JobPhase.DURING_WRITE_BACK, k) for k in itertools.count())


def replace_write_back(output: ConsolidationOutput) -> tuple[MemoryRecord, ...]:
    """The naive baseline (`store.replace(consolidate(store.all()))`): the store's whole new content.

    Every absence reads as a deletion and every change is written in place, so a memory that
    arrived after the read is destroyed. Kept only for the benchmark and the test that shows it.
    """
    return output.memories
