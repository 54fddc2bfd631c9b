"""Fault hooks for failure tests, switched on only through settings (never by code paths in production).

`CrashBeforeApply` ends the process the moment the use case hands its decisions to memory: the
policy has decided, memory has committed nothing, the message is unacknowledged. It is the
"kill the worker after policy and before memory commits" scenario of the Alice fixture, made
deterministic; the redelivery after AckWait must then give the same result as an undisturbed run.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import NoReturn

from services.common.vocabulary import Decision
from services.worker.service.model import ApplyOutcome, ApplyRequest, SenderVerdict, WorkerError
from services.worker.service.ports import MemoryApplier

_log = logging.getLogger(__name__)
CRASH_EXIT_CODE = 86


class CrashBeforeApply:
    """A MemoryApplier that exits the process instead of applying (`os._exit`: no cleanup, no ack)."""

    def __init__(self, inner: MemoryApplier) -> None:
        self._inner = inner

    async def already_processed(self, tenant: str, event_id: str) -> bool:
        return await self._inner.already_processed(tenant, event_id)

    async def processed_among(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        return await self._inner.processed_among(tenant, event_ids)

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
        _crash(f"ApplyLearning with {len(decisions)} decisions")

    async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
        _crash(f"BatchApplyLearning with {sum(len(r.decisions) for r in requests)} decisions")


def _crash(what: str) -> NoReturn:
    _log.warning("fault hook: crashing before %s", what)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    os._exit(CRASH_EXIT_CODE)
