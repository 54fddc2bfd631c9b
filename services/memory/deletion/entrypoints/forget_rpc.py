"""Forget and GetDeletion over gRPC: authorize, protobuf → validated command, use case, protobuf back.

The first of the four files a forget passes through on its way to FAISS (this RPC, the use case in
`deletion/service/forget.py`, the index catch-up in `core/service/index_sync.py`, the index in
`core/adapters/faiss_index.py`). Forget needs a writer (or admin) of the tenant, or the loop's
service token; the token's subject is recorded as who asked. These methods belong to the same proto
service as core's, so `DeletionRpcs` is a mixin joined with core's in
`services.memory.entrypoints.grpc_server`.

Every check runs before the use case, so bad input is INVALID_ARGUMENT naming the field and
nothing is written. A Forget names exactly one target (the request's `target` oneof) and the target
decides the scope, so "forget user X" cannot be read as anything else.
"""

from __future__ import annotations

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import InvalidArgument, require
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.common.telemetry import current_trace_id
from services.memory.core.entrypoints.grpc_server import DOMAIN
from services.memory.core.entrypoints.pb_mapping import timestamp
from services.memory.core.entrypoints.requests import reason_of, tenant_of
from services.memory.deletion.domain.deletion import Deletion, ForgetScope, StepState
from services.memory.deletion.service import forget as use_case
from services.memory.deletion.service.forget import Forget

SCOPE_FROM_PB = {
    pb.FORGET_SCOPE_MEMORY: ForgetScope.MEMORY,
    pb.FORGET_SCOPE_USER: ForgetScope.USER,
    pb.FORGET_SCOPE_EVENT: ForgetScope.EVENT,
}
SCOPE_TO_PB = {v: k for k, v in SCOPE_FROM_PB.items()}
STEP_STATE_TO_PB = {
    StepState.PENDING: pb.DELETION_STEP_STATE_PENDING,
    StepState.DONE: pb.DELETION_STEP_STATE_DONE,
    StepState.FAILED: pb.DELETION_STEP_STATE_FAILED,
}
_SCOPE_OF_TARGET = {
    "memory_id": ForgetScope.MEMORY,
    "user": ForgetScope.USER,
    "event_id": ForgetScope.EVENT,
    "source_request_id": ForgetScope.EVENT,
}


def forget(request: pb.ForgetRequest, *, requested_by: str) -> Forget:
    tenant = tenant_of(request.tenant)
    target = request.WhichOneof("target")
    if target is None:
        raise InvalidArgument("target", "give one of memory_id, user, event_id or source_request_id")
    scope = _SCOPE_OF_TARGET[target]
    require(getattr(request, target), target)
    if request.request_id:
        require(request.request_id, "request_id", max_length=128)
    return Forget(
        tenant=tenant,
        scope=scope,
        requested_by=requested_by,
        memory_id=request.memory_id,
        user=request.user,
        event_id=request.event_id,
        source_request_id=request.source_request_id,
        request_id=request.request_id,
        reason=reason_of(request.reason),
        trace_id=current_trace_id(),
    )


def deletion_to_pb(deletion: Deletion) -> pb.Deletion:
    return pb.Deletion(
        deletion_id=deletion.deletion_id,
        scope=SCOPE_TO_PB[deletion.scope],
        requested_by=deletion.requested_by,
        create_time=timestamp(deletion.created_at),
        steps=[
            pb.DeletionStep(
                location=step.location,
                state=STEP_STATE_TO_PB[step.state],
                error=step.error,
                complete_time=timestamp(step.completed_at),
            )
            for step in deletion.steps
        ],
        complete=deletion.complete,
        complete_time=timestamp(deletion.completed_at) if deletion.complete else None,
        memories_affected=deletion.memories_affected,
    )


class DeletionRpcs(pb_grpc.MemoryServiceServicer):
    def __init__(self, deletions: use_case.DeletionDeps) -> None:
        self._deletions = deletions

    @grpc_method(DOMAIN)
    def Forget(self, request: pb.ForgetRequest, context: grpc.ServicerContext) -> pb.ForgetResponse:
        principal = authorize_tenant(request.tenant)
        receipt = use_case.forget(forget(request, requested_by=principal.subject), self._deletions)
        return pb.ForgetResponse(deletion_id=receipt.deletion_id, memories_affected=receipt.memories_affected)

    @grpc_method(DOMAIN)
    def GetDeletion(self, request: pb.GetDeletionRequest, context: grpc.ServicerContext) -> pb.GetDeletionResponse:
        authorize_tenant(request.tenant)
        tenant, deletion_id = tenant_of(request.tenant), require(request.deletion_id, "deletion_id")
        found = use_case.get_deletion(tenant, deletion_id, self._deletions)
        return pb.GetDeletionResponse(deletion=deletion_to_pb(found))
