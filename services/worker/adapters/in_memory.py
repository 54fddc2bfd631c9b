"""In-memory implementations of the worker's ports, for unit tests of the use case.

They keep the promises the real peers make that the use case relies on: memory's ApplyLearning is
idempotent on event_id and records the event as processed only when it commits; a same-intent STORE
supersedes the active record; conflicts include the active record of the candidate's intent key but
never the candidate's own meaning. (Memory also reports similar records of the same type; the fake
does not, which `tests/integration/test_worker_ports_contract.py` leaves out of the shared contract.)
Policy is a decision function called in process.
Each fake can be told to fail its next calls (`fail_next`), to exercise retry classification.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from services.common.vocabulary import Candidate, Decision, Outcome
from services.worker.service.model import (
    ApplyOutcome,
    ApplyRequest,
    ConflictRecord,
    EmailView,
    Evaluation,
    PermanentError,
    SenderVerdict,
    WorkerError,
)


@dataclass
class _Failures:
    """Errors to raise on the next calls, in order; empty means behave."""

    queue: list[WorkerError] = field(default_factory=list)

    def raise_if_due(self) -> None:
        if self.queue:
            raise self.queue.pop(0)


@dataclass
class InMemoryContentReader:
    """Content blobs keyed by (tenant, content_ref)."""

    blobs: dict[tuple[str, str], EmailView] = field(default_factory=dict)
    failures: _Failures = field(default_factory=_Failures)
    reads: int = 0
    batch_reads: int = 0

    def put(self, tenant: str, content_ref: str, email: EmailView) -> None:
        self.blobs[(tenant, content_ref)] = email

    def fail_next(self, *errors: WorkerError) -> None:
        self.failures.queue.extend(errors)

    async def read(self, tenant: str, content_ref: str) -> EmailView:
        self.reads += 1
        self.failures.raise_if_due()
        found = self._lookup(tenant, content_ref)
        if isinstance(found, PermanentError):
            raise found
        return found

    async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
        self.batch_reads += 1
        self.failures.raise_if_due()
        return {ref: self._lookup(tenant, ref) for ref in content_refs}

    def _lookup(self, tenant: str, content_ref: str) -> EmailView | PermanentError:
        try:
            return self.blobs[(tenant, content_ref)]
        except KeyError:
            if not any(known == tenant for known, _ in self.blobs):
                return PermanentError("TENANT_NOT_FOUND", "status=NOT_FOUND", dependency="serving")
            return PermanentError("CONTENT_NOT_FOUND", "status=NOT_FOUND", dependency="serving")


@dataclass
class StoredEvent:
    """One committed ApplyLearning call."""

    event_id: str
    trace_id: str
    tenant: str
    user: str
    decisions: tuple[Decision, ...]
    sender: SenderVerdict | None = None


@dataclass
class InMemoryMemory:
    """Memory's ledger and active records: ConflictFinder and MemoryApplier in one, like the real service."""

    applied: dict[tuple[str, str], StoredEvent] = field(default_factory=dict)
    apply_calls: int = 0  # ApplyLearning and BatchApplyLearning calls (a batch counts once)
    batch_apply_calls: int = 0
    lookups: int = 0  # already-processed calls, single or batch
    find_calls: int = 0
    failures: _Failures = field(default_factory=_Failures)
    apply_failures: _Failures = field(default_factory=_Failures)
    event_failures: dict[str, _Failures] = field(default_factory=dict)
    find_failures: _Failures = field(default_factory=_Failures)

    def fail_next(self, *errors: WorkerError) -> None:
        """Fail the next calls of any kind (memory down)."""
        self.failures.queue.extend(errors)

    def fail_next_apply(self, *errors: WorkerError) -> None:
        """Fail the next (Batch)ApplyLearning calls as a whole (memory dies between the lookups and the commit)."""
        self.apply_failures.queue.extend(errors)

    def fail_next_find(self, *errors: WorkerError) -> None:
        """Fail the next FindConflicts calls only."""
        self.find_failures.queue.extend(errors)

    def fail_apply_of(self, event_id: str, *errors: WorkerError) -> None:
        """Fail the next applies of one event only: its item of a batch (or its single call) fails,
        the batch's others commit."""
        self.event_failures.setdefault(event_id, _Failures()).queue.extend(errors)

    def active_records(self, tenant: str, user: str) -> list[tuple[str, ConflictRecord]]:
        """(candidate key, record) of every active memory: STOREs, the latest per intent key winning."""
        active: dict[str, tuple[str, ConflictRecord]] = {}
        for stored in self.applied.values():
            if (stored.tenant, stored.user) != (tenant, user):
                continue
            for d in stored.decisions:
                if d.outcome is not Outcome.STORE:
                    continue
                record = ConflictRecord(
                    memory_id=f"mem-{d.candidate.candidate_key}",
                    intent_key=d.candidate.intent_key,
                    text=d.candidate.text,
                    type=d.candidate.type,
                )
                slot = f"intent:{d.candidate.intent_key}" if d.candidate.intent_key else d.candidate.candidate_key
                active[slot] = (d.candidate.candidate_key, record)  # a same-intent STORE supersedes
        return list(active.values())

    async def find(
        self, tenant: str, user: str, candidates: Sequence[Candidate]
    ) -> Mapping[str, Sequence[ConflictRecord]]:
        """Same-intent active records, leaving out the candidate's own meaning (a repeat, not a conflict)."""
        self.find_calls += 1
        self.failures.raise_if_due()
        self.find_failures.raise_if_due()
        return self._conflicts(tenant, user, candidates)

    async def find_many(
        self, tenant: str, requests: Sequence[tuple[str, Sequence[Candidate]]]
    ) -> list[Mapping[str, Sequence[ConflictRecord]]]:
        """`find` of each request in one call (a batch counts once in `find_calls`)."""
        self.find_calls += 1
        self.failures.raise_if_due()
        self.find_failures.raise_if_due()
        return [self._conflicts(tenant, user, candidates) for user, candidates in requests]

    def _conflicts(
        self, tenant: str, user: str, candidates: Sequence[Candidate]
    ) -> Mapping[str, Sequence[ConflictRecord]]:
        active = self.active_records(tenant, user)
        return {
            c.candidate_key: [
                record
                for key, record in active
                if c.intent_key and record.intent_key == c.intent_key and key != c.candidate_key
            ]
            for c in candidates
        }

    async def already_processed(self, tenant: str, event_id: str) -> bool:
        self.lookups += 1
        self.failures.raise_if_due()
        return (tenant, event_id) in self.applied

    async def processed_among(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        self.lookups += 1
        self.failures.raise_if_due()
        return {event_id for event_id in event_ids if (tenant, event_id) in self.applied}

    async def apply(
        self,
        *,
        event_id: str,
        trace_id: str,
        tenant: str,
        user: str,
        decisions: Sequence[Decision],
        event_time: datetime | None = None,
        sender: SenderVerdict | None = None,
    ) -> ApplyOutcome:
        self.apply_calls += 1
        self.failures.raise_if_due()
        self.apply_failures.raise_if_due()
        result = self._apply_one(tenant, ApplyRequest(event_id, trace_id, user, tuple(decisions), sender=sender))
        if isinstance(result, WorkerError):
            raise result
        return result

    async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
        """One call for the batch (counted once); an event told to fail fails alone, the rest commit."""
        self.apply_calls += 1
        self.batch_apply_calls += 1
        self.failures.raise_if_due()
        self.apply_failures.raise_if_due()
        return [self._apply_one(tenant, request) for request in requests]

    def _apply_one(self, tenant: str, request: ApplyRequest) -> ApplyOutcome | WorkerError:
        try:
            self.event_failures.get(request.event_id, _Failures()).raise_if_due()
        except WorkerError as failed:
            return failed
        if (tenant, request.event_id) in self.applied:
            return ApplyOutcome(event_id=request.event_id, already_processed=True, applied_count=0)
        self.applied[(tenant, request.event_id)] = StoredEvent(
            request.event_id, request.trace_id, tenant, request.user, request.decisions, request.sender
        )
        return ApplyOutcome(event_id=request.event_id, already_processed=False, applied_count=len(request.decisions))


Decide = Callable[[Candidate, Sequence[ConflictRecord]], Decision]
"""A policy as a plain function; unit tests pass the real rules (`services.policy.domain.rules`)."""


class InProcessPolicyGate:
    """A PolicyGate that calls a decision function in process instead of the policy service; a batch
    counts as one call, like the one BatchEvaluate it stands for."""

    def __init__(self, decide: Decide) -> None:
        self._decide = decide
        self.failures = _Failures()
        self.calls = 0

    def fail_next(self, *errors: WorkerError) -> None:
        self.failures.queue.extend(errors)

    async def evaluate(
        self, candidate: Candidate, conflicts: Sequence[ConflictRecord], *, tenant: str, user: str, route: str
    ) -> Decision:
        self.calls += 1
        self.failures.raise_if_due()
        return self._decide(candidate, conflicts)

    async def evaluate_many(self, evaluations: Sequence[Evaluation], *, tenant: str) -> list[Decision]:
        self.calls += 1
        self.failures.raise_if_due()
        return [self._decide(e.candidate, e.conflicts) for e in evaluations]
