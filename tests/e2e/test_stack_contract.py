"""Every service of the running stack answers the shared contract: health SERVING, reflection
listing its services, UNAUTHENTICATED without a token, PERMISSION_DENIED for another tenant and
INVALID_ARGUMENT naming the field for malformed input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.cli.stack import Stack
from services.common.gen.memloop.v1 import (
    candidate_pb2,
    consolidation_service_pb2,
    consolidation_service_pb2_grpc,
    learned_procedure_service_pb2,
    learned_procedure_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    policy_service_pb2,
    policy_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_errors import error_details

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

EXPECTED_SERVICES = {
    "serving": {"memloop.v1.ServingService"},
    "policy": {"memloop.v1.PolicyService"},
    "memory": {"memloop.v1.MemoryService", "memloop.v1.LearnedProcedureService", "memloop.v1.ConsolidationService"},
    "relay": set(),
    "worker": set(),
}

# service, a call on a stub for tenant `t`, the field a malformed version of it must name
Call = Callable[[Any, str], Any]
CALLS: list[tuple[str, Callable[[grpc.Channel], Any], Call, Call, str]] = [
    (
        "serving",
        serving_service_pb2_grpc.ServingServiceStub,
        lambda s, t: s.HandleRequest(
            serving_service_pb2.HandleRequestRequest(request_id="r-1", tenant=t, user="u", thread="th", route="x"),
            timeout=10,
        ),
        lambda s, t: s.HandleRequest(
            serving_service_pb2.HandleRequestRequest(request_id="", tenant=t, user="u", thread="th", route="x"),
            timeout=10,
        ),
        "request_id",
    ),
    (
        "memory",
        memory_service_pb2_grpc.MemoryServiceStub,
        lambda s, t: s.ListMemories(memory_service_pb2.ListMemoriesRequest(tenant=t, user="u"), timeout=10),
        lambda s, t: s.ListMemories(memory_service_pb2.ListMemoriesRequest(tenant=t, page_size=-1), timeout=10),
        "page_size",
    ),
    (
        "memory",
        learned_procedure_service_pb2_grpc.LearnedProcedureServiceStub,
        lambda s, t: s.ListLearnedProcedures(
            learned_procedure_service_pb2.ListLearnedProceduresRequest(tenant=t), timeout=10
        ),
        lambda s, t: s.ListLearnedProcedures(
            learned_procedure_service_pb2.ListLearnedProceduresRequest(tenant=t, page_size=-1), timeout=10
        ),
        "page_size",
    ),
    (
        "memory",
        consolidation_service_pb2_grpc.ConsolidationServiceStub,
        lambda s, t: s.ListConsolidationJobs(
            consolidation_service_pb2.ListConsolidationJobsRequest(tenant=t), timeout=10
        ),
        lambda s, t: s.ListConsolidationJobs(
            consolidation_service_pb2.ListConsolidationJobsRequest(tenant=t, page_size=-1), timeout=10
        ),
        "page_size",
    ),
    (
        "policy",
        policy_service_pb2_grpc.PolicyServiceStub,
        lambda s, t: s.Evaluate(
            policy_service_pb2.EvaluateRequest(
                candidate=candidate_pb2.Candidate(
                    candidate_key="k",
                    type=candidate_pb2.MEMORY_TYPE_FACT,
                    origin=candidate_pb2.ORIGIN_OWNER,
                    sensitivity=candidate_pb2.SENSITIVITY_NORMAL,
                    confidence=0.9,
                    text="Alice likes tea",
                ),
                context=policy_service_pb2.EvaluationContext(tenant=t, user="u"),
            ),
            timeout=10,
        ),
        lambda s, t: s.Evaluate(
            policy_service_pb2.EvaluateRequest(
                candidate=candidate_pb2.Candidate(candidate_key="k", text="x", confidence=0.9),
                context=policy_service_pb2.EvaluationContext(tenant=t, user="u"),
            ),
            timeout=10,
        ),
        "candidate.type",
    ),
]


@pytest.mark.parametrize("name", sorted(EXPECTED_SERVICES))
def test_each_process_reports_serving_and_lists_its_services(stack: Stack, name: str) -> None:
    # Given a running service process
    with grpc.insecure_channel(stack.services[name].target) as channel:
        # When asked for health and for its services
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        listing = next(
            reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
            )
        )
    # Then it is SERVING and reflection names every service it hosts
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    listed = {s.name for s in listing.list_services_response.service}
    assert EXPECTED_SERVICES[name] <= listed
    assert "grpc.health.v1.Health" in listed


@pytest.mark.parametrize(("service", "stub_type", "call", "bad_call", "field"), CALLS)
def test_each_api_enforces_auth_tenancy_and_validation(
    stack: Stack, service: str, stub_type: Callable[[grpc.Channel], Any], call: Call, bad_call: Call, field: str
) -> None:
    target = stack.services[service].target
    # Given no token, a token for tenant "acme", and one for "northwind"
    with grpc.insecure_channel(target) as bare, pytest.raises(grpc.RpcError) as missing:
        call(stub_type(bare), "acme")
    token = stack.token("acme", roles=("reader", "writer", "reviewer", "service"))
    with grpc.insecure_channel(target) as raw:
        channel = grpc.intercept_channel(raw, _Bearer(token))
        stub = stub_type(channel)
        # When acme's token asks for northwind's data, or sends malformed input
        with pytest.raises(grpc.RpcError) as denied:
            call(stub, "northwind")
        with pytest.raises(grpc.RpcError) as invalid:
            bad_call(stub, "acme")
    # Then: UNAUTHENTICATED, PERMISSION_DENIED, and INVALID_ARGUMENT naming the field
    assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in error_details(invalid.value)[1]


class _Bearer(grpc.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    def __init__(self, token: str) -> None:
        self._metadata = [("authorization", f"Bearer {token}")]

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(details._replace(metadata=[*(details.metadata or ()), *self._metadata]), request)
