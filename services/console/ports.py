"""What the console needs from the services, as ports, so the handlers can be tested without a stack.

The console never holds a credential of its own for tenant data: every call goes out with the
signed-in person's bearer token, so the services authorise (tenant, role) and audit (actor) the
person, not the console. Results are the services' own protobuf messages: they are the contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.common.gen.memloop.v1 import memory_service_pb2 as mem


class ServiceError(Exception):
    """A service refused or failed a call: canonical code name, its message, the ErrorInfo reason."""

    def __init__(self, code: str, message: str, reason: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reason = reason


class PersonServices(Protocol):
    """The services as one signed-in person sees them (their token on every call)."""

    async def review_items(self, tenant: str, state: int) -> list[mem.ReviewItem]: ...
    async def find_conflicts(self, tenant: str, user: str, candidate: candidate_pb2.Candidate) -> list[mem.Memory]: ...
    async def resolve_review(self, tenant: str, review_item_id: str, approve: bool, reason: str) -> mem.ReviewItem: ...
    async def memories(self, tenant: str, user: str, states: Sequence[int]) -> list[mem.Memory]: ...
    async def search(self, tenant: str, user: str, query: str) -> list[mem.ScoredMemory]: ...
    async def memory(self, tenant: str, memory_id: str) -> mem.Memory: ...
    async def lineage(self, tenant: str, memory_id: str) -> list[mem.Memory]: ...
    async def audit(self, tenant: str, *, memory_id: str = "", event_id: str = "") -> list[mem.AuditEvent]: ...
    async def forget(self, request: mem.ForgetRequest) -> mem.ForgetResponse: ...
    async def deletion(self, tenant: str, deletion_id: str) -> mem.Deletion: ...
    async def procedures(self, tenant: str, kind: int, status: int) -> list[lp.LearnedProcedure]: ...
    async def procedure(self, tenant: str, procedure_id: str) -> lp.GetLearnedProcedureResponse: ...
    async def save_procedure(self, request: lp.SaveLearnedProcedureRequest) -> lp.SaveLearnedProcedureResponse: ...
    async def deprecate_procedure(self, tenant: str, procedure_id: str, reason: str) -> lp.LearnedProcedure: ...
    async def backfill(
        self, tenant: str, rules: Sequence[lp.LegacyRule], validate_only: bool
    ) -> lp.BackfillLearnedProceduresResponse: ...
    async def trace(self, tenant: str, event_id: str) -> list[str]: ...


class Services(Protocol):
    """Hands out a person's view of the services for a verified token."""

    def for_token(self, token: str) -> PersonServices: ...


@dataclass(frozen=True)
class DeadLetterView:
    """One dead letter of the signed-in tenant, as the operator page shows it."""

    sequence: int
    event_id: str
    reason: str
    attempts: int
    last_error: str
    age_seconds: float


class DeadLetters(Protocol):
    """The worker's dead-letter stream, narrowed to one tenant's entries."""

    async def list(self, tenant: str) -> list[DeadLetterView]: ...
    async def replay(self, tenant: str, sequence: int) -> str: ...


@dataclass(frozen=True)
class HealthFigure:
    """One figure of the health page: which service, what, the value (None when unreadable)."""

    service: str
    name: str
    label: str
    value: float | None
    error: str = ""


class MetricsReader(Protocol):
    """Reads the services' Prometheus endpoints."""

    async def figures(self) -> list[HealthFigure]: ...
