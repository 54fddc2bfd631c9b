"""The ServingService servicer: authorize, build the command, call the use case, translate.

Roles per RPC live in the one table, `services.common.access`, enforced by the server bootstrap.
The tenant is authorized before anything is looked up, so a caller for another tenant learns
nothing about what exists there.
"""

from __future__ import annotations

from concurrent.futures import Executor

import grpc
from opentelemetry import trace

from services.common.auth import authorize_tenant
from services.common.errors import FailedPrecondition, require
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.grpc_errors import grpc_method
from services.common.priority import run_in
from services.serving.entrypoints.convert import (
    to_batch_read_response,
    to_command,
    to_handle_response,
    to_outbox_response,
    to_read_response,
)
from services.serving.service import use_cases
from services.serving.service.use_cases import ServingDeps

DOMAIN = "serving.memloop"


def _authorize(tenant: str) -> None:
    """A missing tenant is bad input, not a permission question; otherwise permission first."""
    require(tenant, "tenant")
    authorize_tenant(tenant)


def _current_span_ids() -> tuple[str, str]:
    ctx = trace.get_current_span().get_span_context()
    return (format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")) if ctx.is_valid else ("", "")


class ServingServicer(serving_service_pb2_grpc.ServingServiceServicer):
    def __init__(self, deps: ServingDeps, background: Executor | None = None, *, agents: bool = True) -> None:
        """`background`: where the loop's own calls run (content reads for the worker, deletions):
        a bounded pool whose database backends run idle, so that they never take a core or a
        server thread from an agent's HandleRequest (`priority.loop_executor`). `agents=False`: a
        process that serves the loop only (MEMLOOP_SERVING_ROLE=loop) and refuses HandleRequest,
        which must never run at the idle priority such a process runs at."""
        self._deps = deps
        self._background = background
        self._agents = agents

    @grpc_method(DOMAIN)
    def HandleRequest(
        self, request: serving_service_pb2.HandleRequestRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.HandleRequestResponse:
        if not self._agents:
            raise FailedPrecondition(
                "this serving process serves the learning loop only (MEMLOOP_SERVING_ROLE=loop): "
                "send HandleRequest to the agent-facing serving address"
            )
        _authorize(request.tenant)
        trace_id, span_id = _current_span_ids()
        command = to_command(request, trace_id=trace_id, span_id=span_id)
        return to_handle_response(use_cases.handle_request(command, self._deps))

    @grpc_method(DOMAIN)
    def ReadContent(
        self, request: serving_service_pb2.ReadContentRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.ReadContentResponse:
        _authorize(request.tenant)
        found = run_in(
            self._background, lambda: use_cases.read_content(request.tenant, request.content_ref, self._deps)
        )
        return to_read_response(found)

    @grpc_method(DOMAIN)
    def BatchReadContent(
        self, request: serving_service_pb2.BatchReadContentRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.BatchReadContentResponse:
        _authorize(request.tenant)
        refs = list(request.content_refs)
        return to_batch_read_response(
            run_in(self._background, lambda: use_cases.read_contents(request.tenant, refs, self._deps))
        )

    @grpc_method(DOMAIN)
    def DeleteContent(
        self, request: serving_service_pb2.DeleteContentRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.DeleteContentResponse:
        _authorize(request.tenant)
        deleted = run_in(
            self._background,
            lambda: use_cases.delete_content(
                request.tenant, request.content_ref, request.deletion_id, self._deps, event_id=request.event_id
            ),
        )
        return serving_service_pb2.DeleteContentResponse(deleted=deleted)

    @grpc_method(DOMAIN)
    def DeleteContents(
        self, request: serving_service_pb2.DeleteContentsRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.DeleteContentsResponse:
        _authorize(request.tenant)
        refs, events = list(request.content_refs), list(request.event_ids)
        deleted = run_in(
            self._background,
            lambda: use_cases.delete_contents(request.tenant, refs, events, request.deletion_id, self._deps),
        )
        return serving_service_pb2.DeleteContentsResponse(deleted_count=deleted)

    @grpc_method(DOMAIN)
    def GetOutboxEvent(
        self, request: serving_service_pb2.GetOutboxEventRequest, context: grpc.ServicerContext
    ) -> serving_service_pb2.GetOutboxEventResponse:
        _authorize(request.tenant)
        status = use_cases.get_outbox_event(request.tenant, request.event_id, request.request_id, self._deps)
        return to_outbox_response(status)
