"""LearnedProcedureService servicer (ADR-0102): authorize, parse into a command, call the use case,
translate back.

Permission is checked first, before any lookup (ADR §6: reading is CASE_READ, writing CASE_DECIDE,
the backfill a super-admin step): reading needs `reader`, `decide` or `admin`; saving, confirming
and deprecating need `decide` or `admin`; the backfill needs `admin`. The loop's own service token
passes every check (see `authorize_tenant`). The procedures domain raises the shared error family
(`InvalidProcedure`, `ProcedureSuppresses`, `IllegalTransition`, `LineageConflict`), which
`@grpc_method` maps to canonical codes like any other.
"""

from __future__ import annotations

import grpc

from services.common.auth import authorize_tenant
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as pb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.common.telemetry import current_trace_id
from services.memory.core.entrypoints.requests import tenant_of
from services.memory.core.service.pagination import page_request
from services.memory.procedures.entrypoints import pb_mapping as convert
from services.memory.procedures.service import procedures
from services.memory.procedures.service.backfill import backfill_procedures
from services.memory.procedures.service.procedures import ProcedurePorts

DOMAIN = "memory.memloop"
READ_ROLES = ("reader", "decide", "admin")
DECIDE_ROLES = ("decide", "admin")
BACKFILL_ROLES = ("admin",)


class LearnedProcedureServicer(pb_grpc.LearnedProcedureServiceServicer):
    def __init__(self, ports: ProcedurePorts) -> None:
        self._ports = ports

    @grpc_method(DOMAIN)
    def ListLearnedProcedures(
        self, request: pb.ListLearnedProceduresRequest, context: grpc.ServicerContext
    ) -> pb.ListLearnedProceduresResponse:
        authorize_tenant(request.tenant, roles=READ_ROLES)
        tenant, where = tenant_of(request.tenant), convert.list_filter(request)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=(tenant, where))
        found = procedures.list_procedures(tenant, where, page, self._ports)
        return pb.ListLearnedProceduresResponse(
            learned_procedures=[convert.procedure_to_pb(p) for p in found.items],
            next_page_token=found.next_page_token,
        )

    @grpc_method(DOMAIN)
    def GetLearnedProcedure(
        self, request: pb.GetLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.GetLearnedProcedureResponse:
        authorize_tenant(request.tenant, roles=READ_ROLES)
        tenant, procedure_id = tenant_of(request.tenant), convert.procedure_id_of(request.procedure_id)
        procedure, lineage = procedures.get_procedure(tenant, procedure_id, self._ports)
        return pb.GetLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(procedure),
            lineage=[convert.procedure_to_pb(p) for p in lineage],
        )

    @grpc_method(DOMAIN)
    def SaveLearnedProcedure(
        self, request: pb.SaveLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.SaveLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant, roles=DECIDE_ROLES)
        command = convert.save_command(request, actor=principal.subject)
        plan = procedures.save_canonical(
            command,
            self._ports,
            actor=principal.subject,
            request_id=request.request_id,
            trace_id=current_trace_id(),
        )
        return pb.SaveLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(plan.saved),
            superseded=convert.optional_procedure_to_pb(plan.superseded),
        )

    @grpc_method(DOMAIN)
    def ConfirmLearnedProcedure(
        self, request: pb.ConfirmLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.ConfirmLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant, roles=DECIDE_ROLES)
        tenant, procedure_id = tenant_of(request.tenant), convert.procedure_id_of(request.procedure_id)
        plan = procedures.confirm_procedure(
            tenant, procedure_id, self._ports, actor=principal.subject, trace_id=current_trace_id()
        )
        return pb.ConfirmLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(plan.saved),
            superseded=convert.optional_procedure_to_pb(plan.superseded),
        )

    @grpc_method(DOMAIN)
    def DeprecateLearnedProcedure(
        self, request: pb.DeprecateLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.DeprecateLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant, roles=DECIDE_ROLES)
        deprecated = procedures.deprecate_procedure(
            convert.deprecate_command(request, actor=principal.subject), self._ports
        )
        return pb.DeprecateLearnedProcedureResponse(learned_procedure=convert.procedure_to_pb(deprecated))

    @grpc_method(DOMAIN)
    def BackfillLearnedProcedures(
        self, request: pb.BackfillLearnedProceduresRequest, context: grpc.ServicerContext
    ) -> pb.BackfillLearnedProceduresResponse:
        principal = authorize_tenant(request.tenant, roles=BACKFILL_ROLES)
        tenant, rules = tenant_of(request.tenant), convert.legacy_rules(request)
        result = backfill_procedures(
            tenant,
            rules,
            self._ports,
            actor=principal.subject,
            trace_id=current_trace_id(),
            validate_only=request.validate_only,
        )
        return pb.BackfillLearnedProceduresResponse(
            inserted=result.inserted,
            already_present=result.already_present,
            active=[convert.procedure_to_pb(p) for p in result.active],
            refused=[convert.refused_to_pb(r) for r in result.refused],
        )

    @grpc_method(DOMAIN)
    def ListApplicableProcedures(
        self, request: pb.ListApplicableProceduresRequest, context: grpc.ServicerContext
    ) -> pb.ListApplicableProceduresResponse:
        authorize_tenant(request.tenant, roles=READ_ROLES)
        tenant, scope = tenant_of(request.tenant), convert.case_scope_of(request.scope)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=(tenant, scope))
        found = procedures.list_applicable(tenant, scope, page, self._ports)
        return pb.ListApplicableProceduresResponse(
            learned_procedures=[convert.procedure_to_pb(p) for p in found.items],
            next_page_token=found.next_page_token,
        )
