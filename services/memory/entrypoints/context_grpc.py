"""GetContext: core's memory search and the procedures capability's applicable read, joined.

Core owns the use case but may not import a capability, so this module (the layer that sees every
capability, like the servicer that joins core and deletion) hands it the procedures read as a port
and maps both halves of the answer to protobuf. Validation is SearchMemories' and
ListApplicableProcedures' own, so bad input fails the same way, naming the same fields.
"""

from __future__ import annotations

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.memory.core.entrypoints import requests
from services.memory.core.entrypoints.grpc_server import DOMAIN
from services.memory.core.entrypoints.pb_mapping import scored_to_pb
from services.memory.core.service.context import AgentContext, GetContext, get_context
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.pagination import PageRequest
from services.memory.procedures.domain.procedures import LearnedProcedure
from services.memory.procedures.entrypoints.pb_mapping import case_scope_of, procedure_to_pb
from services.memory.procedures.service.procedures import ProcedurePorts, list_applicable


class ContextRpcs(pb_grpc.MemoryServiceServicer):
    """MemoryService.GetContext, joined into the one servicer by `grpc_server.MemoryServicer`."""

    def __init__(self, ports: MemoryPorts) -> None:
        self._context_ports = ports
        self._procedure_ports = ProcedurePorts.from_memory(ports)

    @grpc_method(DOMAIN)
    def GetContext(self, request: pb.GetContextRequest, context: grpc.ServicerContext) -> pb.GetContextResponse:
        authorize_tenant(request.tenant)
        found = get_context(_command(request, self._context_ports), self._context_ports, self._applicable)
        return _to_pb(found)

    def _applicable(self, tenant: str, scope: str, limit: int) -> list[LearnedProcedure]:
        first_page = PageRequest(size=limit, after=0, fingerprint="")
        return list_applicable(tenant, scope, first_page, self._procedure_ports).items


def _command(request: pb.GetContextRequest, ports: MemoryPorts) -> GetContext:
    search = pb.SearchMemoriesRequest(
        tenant=request.tenant, user=request.user, query=request.query, k=request.k, types=request.types
    )
    try:
        scope = case_scope_of(request.procedure_scope)
    except InvalidArgument as exc:
        raise InvalidArgument("procedure_scope", exc.violations[0].description) from None
    tuning = ports.tuning
    return GetContext(
        search=requests.search(search, default_k=tuning.default_k, max_k=tuning.max_k), procedure_scope=scope
    )


def _to_pb(found: AgentContext[LearnedProcedure]) -> pb.GetContextResponse:
    return pb.GetContextResponse(
        memories=[scored_to_pb(hit) for hit in found.memories],
        procedures=[procedure_to_pb(p) for p in found.procedures],
        context_version=found.version,
        procedure_versions=found.procedure_versions,
    )
