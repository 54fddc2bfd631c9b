"""The roles table holds for every (role, RPC) pair of every service, through the real interceptor.

The RPCs are enumerated from the generated descriptors, so a new RPC without a row in the table
fails here. Every method is served in-process by a stub handler behind `AuthInterceptor`; each
role's token either reaches the handler (OK) or is refused with PERMISSION_DENIED before it runs.
The expected roles are written out below a second time, from the issue's words, so the table
cannot drift from the promise without a test failing.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory

from services.common import access
from services.common.auth import ALL_TENANTS, AuthInterceptor, bearer_metadata, issue_token
from services.common.gen.memloop.v1 import (
    consolidation_service_pb2,
    learned_procedure_service_pb2,
    memory_service_pb2,
    policy_service_pb2,
    serving_service_pb2,
)

SECRET = "unit-test-secret-for-the-access-table-0123456789"
MODULES = (
    serving_service_pb2,
    policy_service_pb2,
    memory_service_pb2,
    learned_procedure_service_pb2,
    consolidation_service_pb2,
)
TENANT_ROLES = ("reader", "writer", "reviewer", "admin")
EVERYONE = (*TENANT_ROLES, "service")

# The promise, restated independently of services/common/access.py.
ONLY_LOOP = {
    "ApplyLearning",
    "BatchApplyLearning",
    "FindConflicts",
    "BatchFindConflicts",
    "ReadContent",
    "BatchReadContent",
    "Evaluate",
    "BatchEvaluate",
}
ONLY_DECIDERS = {
    "SupersedeMemory",
    "DeprecateMemory",
    "ResolveReviewItem",
    "SaveLearnedProcedure",
    "ConfirmLearnedProcedure",
    "DeprecateLearnedProcedure",
}
EXPECTED: dict[str, set[str]] = {
    "HandleRequest": {"writer"},
    "DeleteContent": {"service", "admin"},
    "DeleteContents": {"service", "admin"},
    "GetOutboxEvent": set(EVERYONE),
    "GetProcessedEvent": set(EVERYONE),
    "BatchGetProcessedEvents": set(EVERYONE),
    "Forget": {"writer", "admin"},
    "BackfillLearnedProcedures": {"admin"},
    "RunConsolidation": {"admin", "service"},
    "GetConsolidationJob": set(EVERYONE),
    "ListConsolidationJobs": set(EVERYONE),
    **{name: {"service"} for name in ONLY_LOOP},
    **{name: {"reviewer", "admin"} for name in ONLY_DECIDERS},
}


def _methods() -> list[tuple[str, Any]]:
    found = []
    for module in MODULES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                found.append((f"/{service.full_name}/{method.name}", method))
    return found


METHODS = _methods()


def _expected_roles(name: str) -> set[str]:
    return EXPECTED.get(name, set(TENANT_ROLES))  # the rest: reads of the tenant's own data


def test_the_table_has_a_row_for_every_rpc_and_no_row_for_a_missing_one() -> None:
    assert {full for full, _ in METHODS} == set(access.ACCESS)
    assert len(METHODS) >= 29


@pytest.mark.parametrize("full_name", [full for full, _ in METHODS])
def test_the_table_states_the_promise(full_name: str) -> None:
    rule = access.ACCESS[full_name]
    assert set(rule.roles) == _expected_roles(full_name.rsplit("/", 1)[-1])


def _request_class(method: Any) -> Any:
    return message_factory.GetMessageClass(method.input_type)


def _set_tenant(request: Any, field_path: str, tenant: str) -> None:
    *parents, leaf = field_path.split(".")
    target = request
    for part in parents:
        target = getattr(target, part)
    setattr(target, leaf, tenant)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One in-process server answering every RPC with an empty response, behind the interceptor."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[AuthInterceptor(SECRET)])
    by_service: dict[str, dict[str, grpc.RpcMethodHandler[Any, Any]]] = {}
    for _full, method in METHODS:
        request_class = _request_class(method)
        response_class = message_factory.GetMessageClass(method.output_type)
        handler = grpc.unary_unary_rpc_method_handler(
            lambda request, context, cls=response_class: cls(),
            request_deserializer=request_class.FromString,
            response_serializer=response_class.SerializeToString,
        )
        by_service.setdefault(method.containing_service.full_name, {})[method.name] = handler
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(s, h) for s, h in by_service.items()])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(0)


def _call(target: str, full: str, method: Any, token: str | None, tenant: str) -> grpc.StatusCode:
    request = _request_class(method)()
    _set_tenant(request, access.ACCESS[full].tenant_field, tenant)
    response_class = message_factory.GetMessageClass(method.output_type)
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(
            full, request_serializer=lambda m: m.SerializeToString(), response_deserializer=response_class.FromString
        )
        try:
            call(request, metadata=bearer_metadata(token) if token else (), timeout=10)
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def _token(role: str, tenant: str = "acme") -> str:
    return issue_token(SECRET, subject=f"{role}-1", tenant=ALL_TENANTS if role == "service" else tenant, roles=[role])


@pytest.mark.parametrize("role", EVERYONE)
@pytest.mark.parametrize(("full", "method"), METHODS, ids=[full.rsplit(".", 1)[-1] for full, _ in METHODS])
def test_each_role_reaches_exactly_the_rpcs_the_table_gives_it(server: str, full: str, method: Any, role: str) -> None:
    # Given a token holding only `role` for tenant acme (the service identity: every tenant)
    token = _token(role)
    # When it calls the RPC for its own tenant
    code = _call(server, full, method, token, "acme")
    # Then it gets through exactly when the promise says so, and is refused before the handler otherwise
    allowed = role in _expected_roles(full.rsplit("/", 1)[-1])
    assert code == (grpc.StatusCode.OK if allowed else grpc.StatusCode.PERMISSION_DENIED), (role, full)


@pytest.mark.parametrize(("full", "method"), METHODS, ids=[full.rsplit(".", 1)[-1] for full, _ in METHODS])
def test_an_allowed_role_may_not_cross_tenants_and_no_token_is_unauthenticated(
    server: str, full: str, method: Any
) -> None:
    tenant_roles = sorted(set(_expected_roles(full.rsplit("/", 1)[-1])) - {"service"})
    if tenant_roles:
        assert _call(server, full, method, _token(tenant_roles[0]), "globex") == grpc.StatusCode.PERMISSION_DENIED
    assert _call(server, full, method, None, "acme") == grpc.StatusCode.UNAUTHENTICATED
    forged = issue_token("another-secret-0123456789-0123456789", subject="m", tenant=ALL_TENANTS, roles=EVERYONE)
    assert _call(server, full, method, forged, "acme") == grpc.StatusCode.UNAUTHENTICATED


def test_a_token_for_every_tenant_without_the_service_role_reaches_no_tenant(server: str) -> None:
    # Given an admin token that claims every tenant but is not the loop's service identity
    impostor = issue_token(SECRET, subject="x", tenant=ALL_TENANTS, roles=["admin"])
    full, method = next((f, m) for f, m in METHODS if f.endswith("/GetMemory"))
    # When it reads a tenant's memory, then it is refused
    assert _call(server, full, method, impostor, "acme") == grpc.StatusCode.PERMISSION_DENIED
