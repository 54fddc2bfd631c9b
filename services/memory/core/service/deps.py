"""The ports and knobs a use case may need, bundled once by bootstrap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from services.memory.core.service.decision_gate import DecisionVerifier
from services.memory.core.service.ports import (
    ActiveMemories,
    Effects,
    Embedder,
    MemoryMetrics,
    RetrievalCache,
    Tuning,
    UnitOfWorkFactory,
    VectorIndex,
)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class MemoryPorts:
    uow: UnitOfWorkFactory
    embedder: Embedder
    index: VectorIndex
    cache: RetrievalCache
    effects: Effects
    metrics: MemoryMetrics
    tuning: Tuning
    decisions: DecisionVerifier  # policy's public key: ApplyLearning applies only signed decisions
    active: ActiveMemories  # retrieval's re-check against the database, one round trip
    clock: Callable[[], datetime] = utc_now
