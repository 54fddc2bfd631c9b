"""The ports the learned-procedures use cases name (ADR-0102), apart from memory's own.

Kept in their own module so `ports.py` can name the repository on the memory unit of work (one
transaction for a review approval and the procedure it writes) without an import cycle.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from services.memory.core.service.audit import AuditLog
from services.memory.procedures.domain.procedures import LearnedProcedure, ProcedureKind, ProcedureStatus


@dataclass(frozen=True)
class ProcedureFilter:
    """ListLearnedProcedures filters; None means any kind or any status."""

    kind: ProcedureKind | None = None
    status: ProcedureStatus | None = ProcedureStatus.ACTIVE


class ProcedureRepository(Protocol):
    """The tenant's `learned_procedures` rows. Content columns are written once, by `add`;
    `update_lifecycle` rewrites only status, version, links and updated_at.

    A write that loses the one-active-per-intent (or one-version) race raises
    SupersessionConflict, so the caller can retry its whole unit of work.
    """

    def get(self, procedure_id: str, *, lock: bool = False) -> LearnedProcedure | None: ...
    def active_for_intent(self, intent_key: str, *, lock: bool) -> LearnedProcedure | None: ...
    def max_version(self, intent_key: str) -> int: ...
    def of_intents(self, intent_keys: Collection[str]) -> list[LearnedProcedure]:
        """Every row of these intents, in version order within each intent."""
        ...

    def add(self, procedure: LearnedProcedure) -> None: ...
    def update_lifecycle(self, procedure: LearnedProcedure) -> None: ...
    def page(self, where: ProcedureFilter, *, after_row_id: int, limit: int) -> list[tuple[int, LearnedProcedure]]:
        """Rows after `after_row_id` in row order, each with its row id (the page key)."""
        ...


class _Requests(Protocol):
    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None: ...
    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None: ...


class ProcedureUnitOfWork(Protocol):
    """The slice of the memory unit of work the procedures use cases need (the memory UoW is one).

    Rolls back unless `commit()` is called; `lock(key)` is a transaction-scoped exclusive lock.
    """

    @property
    def procedures(self) -> ProcedureRepository: ...
    @property
    def audit(self) -> AuditLog: ...
    @property
    def requests(self) -> _Requests: ...

    def __enter__(self) -> ProcedureUnitOfWork: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    def commit(self) -> None: ...
    def lock(self, key: str) -> None: ...
