"""A bound on the worker's calls to memory in flight, shared by every batch of the process.

Memory answers ApplyLearning and FindConflicts on the same gRPC server threads (16) as retrieval
(SearchMemories, GetContext: the agent's reads), and runs them on a small ingestion executor. A
worker with many events in flight must not hold every one of those threads waiting for ingestion,
or an agent's read would queue behind learning (issue 15: learning never slows a reply). So the
events in flight may be many (batches overlap, their shared calls are cheap) while the calls
that occupy memory stay few.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime

from services.common.vocabulary import Candidate, Decision
from services.worker.service.model import ApplyOutcome, ApplyRequest, ConflictRecord, SenderVerdict, WorkerError
from services.worker.service.ports import ConflictFinder, MemoryApplier


class BoundedMemory:
    """MemoryApplier and ConflictFinder with at most `limit` (Batch)ApplyLearning/FindConflicts calls at once."""

    def __init__(self, applier: MemoryApplier, finder: ConflictFinder, *, limit: int) -> None:
        self._applier, self._finder = applier, finder
        self._slots = asyncio.Semaphore(limit)

    async def already_processed(self, tenant: str, event_id: str) -> bool:
        return await self._applier.already_processed(tenant, event_id)

    async def processed_among(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        return await self._applier.processed_among(tenant, event_ids)

    async def find(
        self, tenant: str, user: str, candidates: Sequence[Candidate]
    ) -> Mapping[str, Sequence[ConflictRecord]]:
        async with self._slots:
            return await self._finder.find(tenant, user, candidates)

    async def find_many(
        self, tenant: str, requests: Sequence[tuple[str, Sequence[Candidate]]]
    ) -> list[Mapping[str, Sequence[ConflictRecord]]]:
        """A whole batch holds one slot, as `apply_many` does."""
        async with self._slots:
            return await self._finder.find_many(tenant, requests)

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
        async with self._slots:
            return await self._applier.apply(
                event_id=event_id,
                trace_id=trace_id,
                tenant=tenant,
                user=user,
                decisions=decisions,
                event_time=event_time,
                sender=sender,
            )

    async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
        """A whole batch holds one slot: memory applies it on one ingestion thread, in one transaction."""
        async with self._slots:
            return await self._applier.apply_many(tenant, requests)
