"""Who may call what: the one table of roles per RPC, for every service of memloop.

Least privilege, declared once and enforced by the shared server bootstrap (`AccessInterceptor`),
never by hand in a servicer:

- an agent (`writer`) may record (`HandleRequest`), read its own tenant's context and memories,
  and ask to forget its own data;
- only the loop's service identity (`service`, the token the worker and memory's deletion steps
  carry) may call `ApplyLearning`, `FindConflicts`, `ReadContent` and `Evaluate` (and their batch
  forms): these are the hops of the learning path, and a client that could call them could skip
  the policy gate;
- only reviewers and operators (`reviewer`, `admin`) may supersede, deprecate or resolve.

A method missing from the table is refused (fail closed); a unit test checks the table covers every
RPC of every service descriptor. The tenant named in the request is checked here too, before the
servicer runs, so permission is always checked before existence.
"""

from __future__ import annotations

from dataclasses import dataclass

READER = "reader"
WRITER = "writer"
REVIEWER = "reviewer"
ADMIN = "admin"
SERVICE = "service"
ROLES = (READER, WRITER, REVIEWER, ADMIN, SERVICE)

_TENANT_READ = frozenset({READER, WRITER, REVIEWER, ADMIN})
_DECIDE = frozenset({REVIEWER, ADMIN})


@dataclass(frozen=True)
class Rule:
    """The roles that may call one RPC, and where its request names the tenant it acts for."""

    roles: frozenset[str]
    tenant_field: str = "tenant"


def _rule(*roles: str, tenant_field: str = "tenant") -> Rule:
    return Rule(frozenset(roles), tenant_field)


_READ = Rule(_TENANT_READ)

ACCESS: dict[str, Rule] = {
    # ServingService: the agent records; the loop reads content; deletion steps remove it.
    "/memloop.v1.ServingService/HandleRequest": _rule(WRITER),
    "/memloop.v1.ServingService/ReadContent": _rule(SERVICE),
    "/memloop.v1.ServingService/BatchReadContent": _rule(SERVICE),
    "/memloop.v1.ServingService/DeleteContent": _rule(SERVICE, ADMIN),
    "/memloop.v1.ServingService/DeleteContents": _rule(SERVICE, ADMIN),
    "/memloop.v1.ServingService/GetOutboxEvent": _rule(READER, WRITER, REVIEWER, ADMIN, SERVICE),
    # PolicyService: only the loop asks for (signed) decisions.
    "/memloop.v1.PolicyService/Evaluate": _rule(SERVICE, tenant_field="context.tenant"),
    "/memloop.v1.PolicyService/BatchEvaluate": _rule(SERVICE),  # each request's context.tenant must match
    # MemoryService.
    "/memloop.v1.MemoryService/ApplyLearning": _rule(SERVICE),
    "/memloop.v1.MemoryService/BatchApplyLearning": _rule(SERVICE),  # each request's tenant must match
    "/memloop.v1.MemoryService/FindConflicts": _rule(SERVICE),
    "/memloop.v1.MemoryService/BatchFindConflicts": _rule(SERVICE),  # each request's tenant must match
    "/memloop.v1.MemoryService/GetProcessedEvent": _rule(READER, WRITER, REVIEWER, ADMIN, SERVICE),
    "/memloop.v1.MemoryService/BatchGetProcessedEvents": _rule(READER, WRITER, REVIEWER, ADMIN, SERVICE),
    "/memloop.v1.MemoryService/GetMemory": _READ,
    "/memloop.v1.MemoryService/ListMemories": _READ,
    "/memloop.v1.MemoryService/GetLineage": _READ,
    "/memloop.v1.MemoryService/SearchMemories": _READ,
    "/memloop.v1.MemoryService/SupersedeMemory": Rule(_DECIDE),
    "/memloop.v1.MemoryService/DeprecateMemory": Rule(_DECIDE),
    "/memloop.v1.MemoryService/ListReviewItems": _READ,
    "/memloop.v1.MemoryService/ResolveReviewItem": Rule(_DECIDE),
    "/memloop.v1.MemoryService/ListAuditEvents": _READ,
    "/memloop.v1.MemoryService/Forget": _rule(WRITER, ADMIN),
    "/memloop.v1.MemoryService/GetDeletion": _READ,
    "/memloop.v1.MemoryService/GetContext": _READ,  # the agent's read of its own context
    # LearnedProcedureService: agents read what applies; reviewers and operators decide.
    "/memloop.v1.LearnedProcedureService/ListLearnedProcedures": _READ,
    "/memloop.v1.LearnedProcedureService/GetLearnedProcedure": _READ,
    "/memloop.v1.LearnedProcedureService/ListApplicableProcedures": _READ,
    "/memloop.v1.LearnedProcedureService/SaveLearnedProcedure": Rule(_DECIDE),
    "/memloop.v1.LearnedProcedureService/ConfirmLearnedProcedure": Rule(_DECIDE),
    "/memloop.v1.LearnedProcedureService/DeprecateLearnedProcedure": Rule(_DECIDE),
    "/memloop.v1.LearnedProcedureService/BackfillLearnedProcedures": _rule(ADMIN),
    # ConsolidationService: an operator (or a scheduler with the service identity) runs it.
    "/memloop.v1.ConsolidationService/RunConsolidation": _rule(ADMIN, SERVICE),
    "/memloop.v1.ConsolidationService/GetConsolidationJob": _rule(READER, WRITER, REVIEWER, ADMIN, SERVICE),
    "/memloop.v1.ConsolidationService/ListConsolidationJobs": _rule(READER, WRITER, REVIEWER, ADMIN, SERVICE),
}


def rule_for(method: str) -> Rule | None:
    """The rule of a full method name (`/pkg.Service/Method`); None means nobody may call it."""
    return ACCESS.get(method)


def allowed(method: str, roles: frozenset[str]) -> bool:
    """True when any of `roles` may call `method`; an unknown method is never allowed."""
    rule = ACCESS.get(method)
    return rule is not None and bool(rule.roles & roles)


def tenant_of(request: object, field_path: str) -> str:
    """The tenant a request names, following a dotted field path; empty when absent."""
    value: object = request
    for part in field_path.split("."):
        value = getattr(value, part, "")
    return value if isinstance(value, str) else ""
