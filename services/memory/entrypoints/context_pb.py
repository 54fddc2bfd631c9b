"""GetContext's protobuf edge: request → validated command (the same checks as SearchMemories and
ListApplicableProcedures), result → response."""

from __future__ import annotations

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.memory.entrypoints import requests
from services.memory.entrypoints.pb_mapping import scored_to_pb
from services.memory.entrypoints.procedures_pb import case_scope_of, procedure_to_pb
from services.memory.service.context import AgentContext, GetContext


def get_context(request: pb.GetContextRequest, *, default_k: int, max_k: int) -> GetContext:
    search = pb.SearchMemoriesRequest(
        tenant=request.tenant, user=request.user, query=request.query, k=request.k, types=request.types
    )
    try:
        scope = case_scope_of(request.procedure_scope)
    except InvalidArgument as exc:
        raise InvalidArgument("procedure_scope", exc.violations[0].description) from None
    return GetContext(search=requests.search(search, default_k=default_k, max_k=max_k), procedure_scope=scope)


def context_to_pb(found: AgentContext) -> pb.GetContextResponse:
    return pb.GetContextResponse(
        memories=[scored_to_pb(hit) for hit in found.memories],
        procedures=[procedure_to_pb(p) for p in found.procedures],
        context_version=found.version,
        procedure_versions=found.procedure_versions,
    )
