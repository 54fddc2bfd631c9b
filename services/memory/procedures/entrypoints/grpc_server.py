"""LearnedProcedureService servicer (ADR-0102): authorize, parse into a command, call the use case,
translate back.

Permission is checked first, before any lookup (ADR §6: reading is CASE_READ, writing CASE_DECIDE,
the backfill a super-admin step), from the one roles table in `services.common.access`: reading
is open to the tenant's roles; saving, confirming and deprecating need `reviewer` or `admin`; the
backfill needs `admin`. The procedures domain raises plain ValueErrors
(it imports only the standard library and the guard); `_procedure_errors` maps them, once, onto
the shared errors that `@grpc_method` turns into canonical codes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar, cast

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import Aborted, FailedPrecondition, InvalidArgument
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as pb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.common.never_suppress import SuppressionMatch
from services.memory.core.entrypoints.requests import tenant_of
from services.memory.core.service.pagination import page_request
from services.memory.procedures.domain.procedures import (
    IllegalTransition,
    InvalidProcedure,
    LineageConflict,
    ProcedureSuppresses,
)
from services.memory.procedures.entrypoints import pb_mapping as convert
from services.memory.procedures.service import procedures
from services.memory.procedures.service.backfill import backfill_procedures
from services.memory.procedures.service.procedures import ProcedurePorts

DOMAIN = "memory.memloop"

F = TypeVar("F", bound=Callable[..., object])


class NeverSuppressViolation(InvalidArgument):
    """A procedure text that would reduce scrutiny: the field and the guard's rule are named."""

    reason = "NEVER_SUPPRESS"


class ProcedureTransitionRefused(FailedPrecondition):
    reason = "ILLEGAL_TRANSITION"


def _describe(match: SuppressionMatch) -> str:
    return (
        f"refused by the never-suppress rule {match.rule!r} (matched {match.matched!r}): "
        "a learned procedure may only add scrutiny"
    )


def _procedure_errors(method: F) -> F:
    """Map the procedures domain's errors onto the shared ones, for `@grpc_method` to send."""

    @functools.wraps(method)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return method(*args, **kwargs)
        except ProcedureSuppresses as exc:
            raise NeverSuppressViolation(exc.field, _describe(exc.match)) from exc
        except InvalidProcedure as exc:
            raise InvalidArgument(exc.field, exc.message) from exc
        except IllegalTransition as exc:
            raise ProcedureTransitionRefused(str(exc)) from exc
        except LineageConflict as exc:
            raise Aborted(str(exc), reason="LINEAGE_CONFLICT") from exc

    return cast(F, wrapper)


class LearnedProcedureServicer(pb_grpc.LearnedProcedureServiceServicer):
    def __init__(self, ports: ProcedurePorts) -> None:
        self._ports = ports

    @grpc_method(DOMAIN)
    @_procedure_errors
    def ListLearnedProcedures(
        self, request: pb.ListLearnedProceduresRequest, context: grpc.ServicerContext
    ) -> pb.ListLearnedProceduresResponse:
        authorize_tenant(request.tenant)
        tenant, where = tenant_of(request.tenant), convert.list_filter(request)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=(tenant, where))
        found = procedures.list_procedures(tenant, where, page, self._ports)
        return pb.ListLearnedProceduresResponse(
            learned_procedures=[convert.procedure_to_pb(p) for p in found.items],
            next_page_token=found.next_page_token,
        )

    @grpc_method(DOMAIN)
    @_procedure_errors
    def GetLearnedProcedure(
        self, request: pb.GetLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.GetLearnedProcedureResponse:
        authorize_tenant(request.tenant)
        tenant, procedure_id = tenant_of(request.tenant), convert.procedure_id_of(request.procedure_id)
        procedure, lineage = procedures.get_procedure(tenant, procedure_id, self._ports)
        return pb.GetLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(procedure),
            lineage=[convert.procedure_to_pb(p) for p in lineage],
        )

    @grpc_method(DOMAIN)
    @_procedure_errors
    def SaveLearnedProcedure(
        self, request: pb.SaveLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.SaveLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant)
        command = convert.save_command(request, actor=principal.subject)
        plan = procedures.save_canonical(command, self._ports, actor=principal.subject, request_id=request.request_id)
        return pb.SaveLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(plan.saved),
            superseded=convert.optional_procedure_to_pb(plan.superseded),
        )

    @grpc_method(DOMAIN)
    @_procedure_errors
    def ConfirmLearnedProcedure(
        self, request: pb.ConfirmLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.ConfirmLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant)
        tenant, procedure_id = tenant_of(request.tenant), convert.procedure_id_of(request.procedure_id)
        plan = procedures.confirm_procedure(tenant, procedure_id, self._ports, actor=principal.subject)
        return pb.ConfirmLearnedProcedureResponse(
            learned_procedure=convert.procedure_to_pb(plan.saved),
            superseded=convert.optional_procedure_to_pb(plan.superseded),
        )

    @grpc_method(DOMAIN)
    @_procedure_errors
    def DeprecateLearnedProcedure(
        self, request: pb.DeprecateLearnedProcedureRequest, context: grpc.ServicerContext
    ) -> pb.DeprecateLearnedProcedureResponse:
        principal = authorize_tenant(request.tenant)
        deprecated = procedures.deprecate_procedure(
            convert.deprecate_command(request, actor=principal.subject), self._ports
        )
        return pb.DeprecateLearnedProcedureResponse(learned_procedure=convert.procedure_to_pb(deprecated))

    @grpc_method(DOMAIN)
    @_procedure_errors
    def BackfillLearnedProcedures(
        self, request: pb.BackfillLearnedProceduresRequest, context: grpc.ServicerContext
    ) -> pb.BackfillLearnedProceduresResponse:
        principal = authorize_tenant(request.tenant)
        tenant, rules = tenant_of(request.tenant), convert.legacy_rules(request)
        result = backfill_procedures(tenant, rules, self._ports, actor=principal.subject)
        return pb.BackfillLearnedProceduresResponse(
            inserted=result.inserted,
            already_present=result.already_present,
            active=[convert.procedure_to_pb(p) for p in result.active],
            refused=[convert.refused_to_pb(r) for r in result.refused],
        )

    @grpc_method(DOMAIN)
    @_procedure_errors
    def ListApplicableProcedures(
        self, request: pb.ListApplicableProceduresRequest, context: grpc.ServicerContext
    ) -> pb.ListApplicableProceduresResponse:
        authorize_tenant(request.tenant)
        tenant, scope = tenant_of(request.tenant), convert.case_scope_of(request.scope)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=(tenant, scope))
        found = procedures.list_applicable(tenant, scope, page, self._ports)
        return pb.ListApplicableProceduresResponse(
            learned_procedures=[convert.procedure_to_pb(p) for p in found.items],
            next_page_token=found.next_page_token,
        )
