"""Forget / GetDeletion: protobuf request → validated command, deletion → protobuf response.

Every check runs before the use case, so bad input is INVALID_ARGUMENT naming the field and
nothing is written. A Forget names exactly one target, the field of its scope: a field of another
scope is refused rather than ignored, so "forget user X" sent with the wrong scope cannot forget
something else.
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
_TARGET_FIELDS = {
    ForgetScope.MEMORY: ("memory_id",),
    ForgetScope.USER: ("user",),
    ForgetScope.EVENT: ("event_id", "source_request_id"),
}


def forget(request: pb.ForgetRequest, *, requested_by: str) -> Forget:
    tenant = tenant_of(request.tenant)
    scope = SCOPE_FROM_PB.get(request.scope)
    if scope is None:
        raise InvalidArgument("scope", "must be MEMORY, USER or EVENT")
    foreign = [f for other, fields in _TARGET_FIELDS.items() if other is not scope for f in fields]
    for field in foreign:
        if getattr(request, field):
            raise InvalidArgument(field, f"does not apply to scope {scope.value.upper()}")
    if scope is ForgetScope.EVENT:
        if bool(request.event_id) == bool(request.source_request_id):
            raise InvalidArgument("event_id", "give exactly one of event_id and source_request_id")
    else:
        require(getattr(request, _TARGET_FIELDS[scope][0]), _TARGET_FIELDS[scope][0])
    for field in ("memory_id", "user", "event_id", "source_request_id"):
        if getattr(request, field):
            require(getattr(request, field), field)
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


def deletion_to_pb(deletion: Deletion) -> pb.GetDeletionResponse:
    return pb.GetDeletionResponse(
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
