"""A spot check of the roles table against the running stack (the full matrix is a unit test over
the interceptor, tests/unit/test_access_table.py): each token reaches exactly what its role allows,
on the real processes, and the loop's service identity is what the worker really carries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from services.cli.stack import Stack
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import memory_service_pb2 as mpb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as mpb_grpc
from services.common.gen.memloop.v1 import policy_service_pb2 as ppb
from services.common.gen.memloop.v1 import policy_service_pb2_grpc as ppb_grpc
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from services.common.gen.memloop.v1 import serving_service_pb2_grpc as spb_grpc
from services.common.grpc_client import sync_channel

pytestmark = pytest.mark.e2e

CALLS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "ApplyLearning": (
        "memory",
        lambda ch: mpb_grpc.MemoryServiceStub(ch).ApplyLearning(
            mpb.ApplyLearningRequest(tenant="acme", user="alice", event_id="evt-spot"), timeout=10
        ),
    ),
    "FindConflicts": (
        "memory",
        lambda ch: mpb_grpc.MemoryServiceStub(ch).FindConflicts(
            mpb.FindConflictsRequest(tenant="acme", user="alice"), timeout=10
        ),
    ),
    "SupersedeMemory": (
        "memory",
        lambda ch: mpb_grpc.MemoryServiceStub(ch).SupersedeMemory(
            mpb.SupersedeMemoryRequest(tenant="acme", memory_id="m-none", text="x", request_id="r"), timeout=10
        ),
    ),
    "ListMemories": (
        "memory",
        lambda ch: mpb_grpc.MemoryServiceStub(ch).ListMemories(
            mpb.ListMemoriesRequest(tenant="acme", user="alice"), timeout=10
        ),
    ),
    "ReadContent": (
        "serving",
        lambda ch: spb_grpc.ServingServiceStub(ch).ReadContent(
            spb.ReadContentRequest(tenant="acme", content_ref="c-none"), timeout=10
        ),
    ),
    "BatchReadContent": (
        "serving",
        lambda ch: spb_grpc.ServingServiceStub(ch).BatchReadContent(
            spb.BatchReadContentRequest(tenant="acme", content_refs=["c-none"]), timeout=10
        ),
    ),
    "BatchEvaluate": (
        "policy",
        lambda ch: ppb_grpc.PolicyServiceStub(ch).BatchEvaluate(ppb.BatchEvaluateRequest(tenant="acme"), timeout=10),
    ),
    "Evaluate": (
        "policy",
        lambda ch: ppb_grpc.PolicyServiceStub(ch).Evaluate(
            ppb.EvaluateRequest(
                candidate=cpb.Candidate(
                    candidate_key="k",
                    type=cpb.MEMORY_TYPE_FACT,
                    origin=cpb.ORIGIN_OWNER,
                    sensitivity=cpb.SENSITIVITY_NORMAL,
                    confidence=0.9,
                    text="t",
                    event_id="e",
                ),
                context=ppb.EvaluationContext(tenant="acme", user="alice"),
            ),
            timeout=10,
        ),
    ),
}
# role -> RPCs it may call among CALLS (the rest must be PERMISSION_DENIED before any lookup)
ALLOWED = {
    "writer": {"ListMemories"},
    "reviewer": {"ListMemories", "SupersedeMemory"},
    "service": {"ApplyLearning", "FindConflicts", "ReadContent", "BatchReadContent", "Evaluate", "BatchEvaluate"},
}


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_each_role_reaches_only_its_rpcs_on_the_running_stack(stack: Stack, role: str) -> None:
    token = stack.service_token() if role == "service" else stack.token("acme", roles=(role,))
    for name, (service, call) in CALLS.items():
        with sync_channel(stack.services[service].target, token) as channel:
            try:
                call(channel)
                code = grpc.StatusCode.OK
            except grpc.RpcError as error:
                code = error.code()
        if name in ALLOWED[role]:
            assert code != grpc.StatusCode.PERMISSION_DENIED, (role, name)
        else:
            assert code == grpc.StatusCode.PERMISSION_DENIED, (role, name, code)
