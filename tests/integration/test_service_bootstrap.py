"""The bootstrap every gRPC service shares, in a real process: health, reflection, auth, error
details, and a SIGTERM that lets the call in flight finish."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.grpc_client import sync_channel
from services.common.grpc_errors import error_details
from services.common.infra.processes import ServiceProcess, free_port
from tests.helpers import SpawnService

pytestmark = pytest.mark.integration

SECRET = SigningKey.generate()  # the issuer's key; the service gets its public half
MODULE = "tests.integration.standins.slow_serving"


def _start(spawn: SpawnService, delay: float = 2.0, started_dir: Path | None = None) -> tuple[ServiceProcess, str]:
    port = free_port()
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": SECRET.public_pem(),
        "MEMLOOP_GRPC_PORT": str(port),
        "STANDIN_DELAY_SECONDS": str(delay),
        "MEMLOOP_DRAIN_SECONDS": "10",
    }
    if started_dir is not None:
        env["STANDIN_STARTED_DIR"] = str(started_dir)
    return spawn(MODULE, env, port, "standin"), f"127.0.0.1:{port}"


def _request(tenant: str = "acme", request_id: str = "req-1") -> serving_service_pb2.HandleRequestRequest:
    return serving_service_pb2.HandleRequestRequest(request_id=request_id, tenant=tenant, reply="hi")


def _auth(tenant: str) -> tuple[tuple[str, str | bytes], ...]:
    return (("authorization", f"Bearer {issue_token(SECRET, subject='t', tenant=tenant, roles=['writer'])}"),)


def test_health_and_reflection_answer_without_a_token(spawn: SpawnService) -> None:
    # given
    _, target = _start(spawn, delay=0)
    with grpc.insecure_channel(target) as channel:
        # when
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="memloop.v1.ServingService"), timeout=5
        )
        listing = next(
            reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
            )
        )
    # then
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert "memloop.v1.ServingService" in {s.name for s in listing.list_services_response.service}


def test_calls_without_a_valid_token_are_unauthenticated(spawn: SpawnService) -> None:
    # given
    _, target = _start(spawn, delay=0)
    forged = issue_token(SigningKey.generate(), subject="m", tenant="acme", roles=["writer"])  # not the issuer
    # a shared-secret token, as any service could mint before: HS256 is not accepted by default
    legacy = issue_token("a-shared-hs256-secret-long-enough-to-sign", subject="m", tenant="acme", roles=["writer"])
    with grpc.insecure_channel(target) as channel:
        stub = serving_service_pb2_grpc.ServingServiceStub(channel)
        # when
        with pytest.raises(grpc.RpcError) as missing:
            stub.HandleRequest(_request(), timeout=5)
        refused = []
        for token in (forged, legacy):
            with pytest.raises(grpc.RpcError) as invalid:
                stub.HandleRequest(_request(), metadata=(("authorization", f"Bearer {token}"),), timeout=5)
            refused.append(invalid.value)
    # then
    assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_details(missing.value)[0] == "TOKEN_MISSING"
    for error in refused:
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_details(error)[0] == "TOKEN_INVALID"


def test_another_tenant_is_permission_denied_and_bad_input_names_the_field(spawn: SpawnService) -> None:
    # given
    _, target = _start(spawn, delay=0)
    with grpc.insecure_channel(target) as channel:
        stub = serving_service_pb2_grpc.ServingServiceStub(channel)
        # when
        with pytest.raises(grpc.RpcError) as denied:
            stub.HandleRequest(_request(tenant="northwind"), metadata=_auth("acme"), timeout=5)
        with pytest.raises(grpc.RpcError) as invalid:
            stub.HandleRequest(_request(request_id=""), metadata=_auth("acme"), timeout=5)
    # then
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_details(invalid.value) == ("INVALID_ARGUMENT", ["request_id"])


def test_sigterm_lets_the_call_in_flight_finish(spawn: SpawnService, tmp_path: Path) -> None:
    # given a call that takes two seconds
    service, target = _start(spawn, delay=2.0, started_dir=tmp_path)
    outcome: dict[str, object] = {}

    def call() -> None:
        with grpc.insecure_channel(target) as channel:
            stub = serving_service_pb2_grpc.ServingServiceStub(channel)
            outcome["response"] = stub.HandleRequest(_request(), metadata=_auth("acme"), timeout=30)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 30
    while not (tmp_path / "req-1").exists():  # the server has started handling the call
        assert time.monotonic() < deadline, "the call never reached the server"
        time.sleep(0.01)
    # when the service is told to stop while the call is in flight
    status = service.terminate(timeout=20.0)
    caller.join(timeout=30)
    # then the call completed and the process exited cleanly
    response = outcome.get("response")
    assert isinstance(response, serving_service_pb2.HandleRequestResponse)
    assert response.result_id == "done"
    assert status == 0


def test_the_shared_client_channel_carries_the_token_and_trace(spawn: SpawnService) -> None:
    # given a channel built the way every memloop client builds one
    _, target = _start(spawn, delay=0)
    token = issue_token(SECRET, subject="t", tenant="acme", roles=["writer"])
    # when a call goes through it
    with sync_channel(target, token) as channel:
        response = serving_service_pb2_grpc.ServingServiceStub(channel).HandleRequest(_request(), timeout=5)
    # then the server authenticated it
    assert response.result_id == "done"
