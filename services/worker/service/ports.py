"""The ports the learning use case names; gRPC adapters and in-memory fakes implement them.

Every method may raise `TransientError` (retry later) or `PermanentError` (dead-letter): the
adapters translate their transport's failures into those two, so the use case never sees gRPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from services.common.vocabulary import Candidate, Decision
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


class ContentReader(Protocol):
    """Serving's content store, read by opaque reference."""

    async def read(self, tenant: str, content_ref: str) -> EmailView:
        """The email behind `content_ref`; PermanentError when it does not exist for that tenant."""
        ...

    async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
        """Every reference's email in one call, or the PermanentError `read` would raise for it alone
        (CONTENT_NOT_FOUND, TENANT_NOT_FOUND): a missing blob fails its own event, not the others.
        Raises like `read` when the call as a whole fails."""
        ...


class ConflictFinder(Protocol):
    """Memory's view of active records a candidate may contradict."""

    async def find(
        self, tenant: str, user: str, candidates: Sequence[Candidate]
    ) -> Mapping[str, Sequence[ConflictRecord]]:
        """Conflicting active records keyed by candidate key (a key may be absent: no conflicts)."""
        ...

    async def find_many(
        self, tenant: str, requests: Sequence[tuple[str, Sequence[Candidate]]]
    ) -> list[Mapping[str, Sequence[ConflictRecord]]]:
        """`find` of each (user, candidates) request of one tenant, in request order, in one call."""
        ...


class PolicyGate(Protocol):
    """The policy service: one decision per candidate, a pure function of the request."""

    async def evaluate(
        self, candidate: Candidate, conflicts: Sequence[ConflictRecord], *, tenant: str, user: str, route: str
    ) -> Decision:
        """STORE, REVIEW or REJECT with reasons and the policy version."""
        ...

    async def evaluate_many(self, evaluations: Sequence[Evaluation], *, tenant: str) -> list[Decision]:
        """`evaluate` for every item of one tenant, in order, in one call: each decision signed for its
        own user and event as `evaluate` would have it. Raises for the call as a whole."""
        ...


class MemoryApplier(Protocol):
    """Memory's event ledger: whether an event was processed, and the one call that applies it."""

    async def already_processed(self, tenant: str, event_id: str) -> bool:
        """True when memory has recorded `event_id` as processed (its outcome is final)."""
        ...

    async def processed_among(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        """The ids among `event_ids` that memory has recorded as processed, in one call."""
        ...

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
        """Apply all decisions of one event in one transaction; idempotent on `event_id`.

        `sender` (the mail's sender-authentication verdict) is kept in the event's audit entry.
        """
        ...

    async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
        """Apply many events of one tenant in one memory transaction; one result per request, in
        order: its outcome (committed when this returns), or its own failure, nothing of it written.

        Raises (TransientError / PermanentError) only when memory refused or failed the call as a whole.
        """
        ...
