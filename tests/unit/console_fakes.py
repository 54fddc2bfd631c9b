"""In-memory stand-ins for the console's ports: the services enforce roles here as memory does, so
unit tests can show the console hides actions *and* that a forged request is still refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from services.common.auth import Principal, TokenVerifier
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.common.never_suppress import find_suppression
from services.console.ports import DeadLetterView, HealthFigure, ServiceError
from services.console.web.common import Console, templates
from services.console.web.session import CsrfSigner, VerifierAuthenticator

ISSUER = SigningKey.generate()
"""The test issuer: tokens are signed with it and verified against its public key, as the services do."""
VERIFIER = TokenVerifier(ISSUER.public_key_set())
CSRF_SECRET = "unit-test-csrf-" + "x" * 32


@dataclass
class FakeWorld:
    """The services' state, shared by every person's view."""

    review_items: list[mem.ReviewItem] = field(default_factory=list)
    memories: list[mem.Memory] = field(default_factory=list)
    procedures: list[lp.LearnedProcedure] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, subject)
    backfill_requests: list[bool] = field(default_factory=list)


class FakePerson:
    def __init__(self, world: FakeWorld, principal: Principal) -> None:
        self.world = world
        self.principal = principal

    def _check(self, method: str, tenant: str, roles: Sequence[str]) -> None:
        self.world.calls.append((method, self.principal.subject))
        if tenant != self.principal.tenant:
            raise ServiceError("PERMISSION_DENIED", "other tenant")
        if not self.principal.roles & set(roles):
            raise ServiceError("PERMISSION_DENIED", f"requires one of roles {sorted(roles)}", "ROLE_REQUIRED")

    async def review_items(self, tenant: str, state: int) -> list[mem.ReviewItem]:
        self._check("ListReviewItems", tenant, ("reader", "reviewer", "admin"))
        return [i for i in self.world.review_items if i.tenant == tenant and i.state == state]

    async def find_conflicts(self, tenant: str, user: str, candidate: candidate_pb2.Candidate) -> list[mem.Memory]:
        self._check("FindConflicts", tenant, ("reader", "reviewer", "admin"))
        return [
            m
            for m in self.world.memories
            if m.tenant == tenant and m.user == user and candidate.intent_key and m.intent_key == candidate.intent_key
        ]

    async def resolve_review(self, tenant: str, review_item_id: str, approve: bool, reason: str) -> mem.ReviewItem:
        self._check("ResolveReviewItem", tenant, ("reviewer", "admin"))
        item = next(i for i in self.world.review_items if i.review_item_id == review_item_id)
        item.state = mem.REVIEW_STATE_APPROVED if approve else mem.REVIEW_STATE_DENIED
        item.reviewer, item.resolution_reason = self.principal.subject, reason
        return item

    async def memories(self, tenant: str, user: str, states: Sequence[int]) -> list[mem.Memory]:
        self._check("ListMemories", tenant, ("reader", "reviewer", "admin"))
        return [m for m in self.world.memories if m.tenant == tenant and (not user or m.user == user)]

    async def search(self, tenant: str, user: str, query: str) -> list[mem.ScoredMemory]:
        return [mem.ScoredMemory(memory=m, score=0.5) for m in await self.memories(tenant, user, [])]

    async def procedures(self, tenant: str, kind: int, status: int) -> list[lp.LearnedProcedure]:
        self._check("ListLearnedProcedures", tenant, ("reader", "decide", "admin"))
        wanted = status or lp.PROCEDURE_STATE_ACTIVE
        return [p for p in self.world.procedures if p.state == wanted and (not kind or p.kind == kind)]

    async def save_procedure(self, request: lp.SaveLearnedProcedureRequest) -> lp.SaveLearnedProcedureResponse:
        self._check("SaveLearnedProcedure", request.tenant, ("decide", "admin"))
        match = find_suppression(request.action)
        if match is not None:
            raise ServiceError(
                "INVALID_ARGUMENT", f"refused by the never-suppress rule {match.rule!r}", "NEVER_SUPPRESS"
            )
        saved = lp.LearnedProcedure(
            procedure_id=f"p{len(self.world.procedures)}", intent_key=request.intent_key, title=request.title,
            kind=request.kind, scope=request.scope, trigger=request.trigger, action=request.action,
            state=lp.PROCEDURE_STATE_ACTIVE, version=1, created_by=self.principal.subject,
        )  # fmt: skip
        self.world.procedures.append(saved)
        return lp.SaveLearnedProcedureResponse(learned_procedure=saved)

    async def procedure(self, tenant: str, procedure_id: str) -> lp.GetLearnedProcedureResponse:
        self._check("GetLearnedProcedure", tenant, ("reader", "decide", "admin"))
        found = next((p for p in self.world.procedures if p.procedure_id == procedure_id), None)
        if found is None:
            raise ServiceError("NOT_FOUND", f"no learned procedure {procedure_id}")
        return lp.GetLearnedProcedureResponse(learned_procedure=found, lineage=[found])

    async def deprecate_procedure(self, tenant: str, procedure_id: str, reason: str) -> lp.LearnedProcedure:
        self._check("DeprecateLearnedProcedure", tenant, ("decide", "admin"))
        found = (await self.procedure(tenant, procedure_id)).learned_procedure
        found.state = lp.PROCEDURE_STATE_DEPRECATED
        return found

    async def backfill(
        self, tenant: str, rules: Sequence[lp.LegacyRule], validate_only: bool
    ) -> lp.BackfillLearnedProceduresResponse:
        self._check("BackfillLearnedProcedures", tenant, ("admin",))
        self.world.backfill_requests.append(validate_only)
        return lp.BackfillLearnedProceduresResponse(inserted=0 if validate_only else len(rules))

    async def forget(self, request: mem.ForgetRequest) -> mem.ForgetResponse:
        self._check("Forget", request.tenant, ("admin",))
        return mem.ForgetResponse(deletion_id="del-1", memories_affected=1)

    async def deletion(self, tenant: str, deletion_id: str) -> mem.Deletion:
        self._check("GetDeletion", tenant, ("reader", "reviewer", "admin"))
        step = mem.DeletionStep(location="vectors", state=mem.DELETION_STEP_STATE_PENDING)
        return mem.Deletion(deletion_id=deletion_id, steps=[step], complete=False)


class FakeServices:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def for_token(self, token: str) -> FakePerson:
        return FakePerson(self.world, VERIFIER.verify(token))


class FakeDeadLetters:
    def __init__(self) -> None:
        self.replayed: list[tuple[str, int]] = []

    async def list(self, tenant: str) -> list[DeadLetterView]:
        return [DeadLetterView(7, "evt-1", "memory_unavailable", 5, "UNAVAILABLE", 12.0)]

    async def replay(self, tenant: str, sequence: int) -> str:
        self.replayed.append((tenant, sequence))
        return "replayed"


class FakeMetrics:
    async def figures(self) -> list[HealthFigure]:
        return [HealthFigure("worker", "memloop_worker_dlq_depth", "Dead-letter queue depth", 1.0)]


def fake_console(world: FakeWorld, dead_letters: FakeDeadLetters | None = None) -> Console:
    return Console(
        services=FakeServices(world),  # type: ignore[arg-type]
        dead_letters=dead_letters or FakeDeadLetters(),
        metrics=FakeMetrics(),
        authenticator=VerifierAuthenticator(VERIFIER),
        signer=CsrfSigner(CSRF_SECRET),
        secure_cookies=False,
        templates=templates(),
    )
