"""The client's deletion calls speak the memory contract as merged: Forget names its target in the
`target` oneof (which one is set decides the scope) and GetDeletion answers a wrapped `Deletion`."""

from __future__ import annotations

import pytest

from memloop_client import InvalidArgument
from memloop_client._convert import deletion, forget_request
from memloop_client._gen.memloop.v1 import memory_service_pb2 as pb

NO_TARGET = {"memory_id": "", "user": "", "event_id": "", "source_request_id": ""}


@pytest.mark.parametrize("target", ["memory_id", "user", "event_id", "source_request_id"])
def test_forget_sets_exactly_the_named_target(target: str) -> None:
    fields = {**NO_TARGET, target: "x-1"}
    request = forget_request(tenant="acme", reason="asked", request_id="r-1", **fields)
    assert request.WhichOneof("target") == target and getattr(request, target) == "x-1"
    assert (request.tenant, request.reason, request.request_id) == ("acme", "asked", "r-1")


@pytest.mark.parametrize(
    "fields",
    [NO_TARGET, {**NO_TARGET, "event_id": "e", "source_request_id": "s"}, {**NO_TARGET, "user": "u", "memory_id": "m"}],
)
def test_forget_refuses_no_target_or_several_before_any_call(fields: dict[str, str]) -> None:
    with pytest.raises(InvalidArgument) as raised:
        forget_request(tenant="acme", reason="", request_id="", **fields)
    assert raised.value.field == "target"


def test_a_deletion_is_read_from_the_wrapped_message() -> None:
    answer = pb.GetDeletionResponse(
        deletion=pb.Deletion(
            deletion_id="d-1",
            scope=pb.FORGET_SCOPE_USER,
            requested_by="rita",
            complete=True,
            memories_affected=3,
            steps=[pb.DeletionStep(location="streams", state=pb.DELETION_STEP_STATE_DONE)],
        )
    )
    answer.deletion.create_time.FromSeconds(1_700_000_000)
    read = deletion(answer)
    assert (read.deletion_id, read.scope, read.requested_by, read.complete) == ("d-1", "user", "rita", True)
    assert read.memories_affected == 3 and read.create_time is not None and read.complete_time is None
    assert [(s.location, s.state) for s in read.steps] == [("streams", "done")]
