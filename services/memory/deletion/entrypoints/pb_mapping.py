"""Forget / GetDeletion: protobuf request → validated command, deletion → protobuf response.

Every check runs before the use case, so bad input is INVALID_ARGUMENT naming the field and
nothing is written. A Forget names exactly one target (the request's `target` oneof) and the target
decides the scope, so "forget user X" cannot be read as anything else.
"""

from __future__ import annotations

from services.common.errors import InvalidArgument, require
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.memory.core.entrypoints.pb_mapping import timestamp
from services.memory.core.entrypoints.requests import reason_of, tenant_of
from services.memory.deletion.domain.deletion import Deletion, ForgetScope, StepState
from services.memory.deletion.service.deletion import Forget

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
