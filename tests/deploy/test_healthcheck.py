"""The container health check asks the gRPC health service the same question the launcher asks."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from services.common import healthcheck
from services.common.auth_keys import SigningKey
from services.common.grpc_server import RunningServer, start_server
from services.common.settings import CommonSettings


@pytest.fixture
def server() -> Iterator[RunningServer]:
    settings = CommonSettings.from_env(
        "probe-test",
        {
            "MEMLOOP_AUTH_PUBLIC_KEYS": SigningKey.generate().public_pem(),
            "MEMLOOP_GRPC_HOST": "127.0.0.1",
            "MEMLOOP_GRPC_PORT": "0",
        },
    )
    running = start_server(settings, [], max_workers=2)
    yield running
    running.stop(0)


def test_a_serving_process_is_healthy(server: RunningServer) -> None:
    assert healthcheck.main([f"127.0.0.1:{server.port}"]) == 0


def test_the_port_defaults_to_the_process_own_grpc_port(server: RunningServer) -> None:
    assert healthcheck.main([], {"MEMLOOP_GRPC_PORT": str(server.port)}) == 0


def test_a_draining_process_is_unhealthy(server: RunningServer) -> None:
    server.health.enter_graceful_shutdown()  # what SIGTERM does before the drain
    assert healthcheck.check(f"127.0.0.1:{server.port}") == "NOT_SERVING"
    assert healthcheck.main([f"127.0.0.1:{server.port}"]) == 1


def test_an_unknown_service_name_is_unhealthy(server: RunningServer) -> None:
    assert healthcheck.main([f"127.0.0.1:{server.port}", "memloop.v1.NoSuchService"]) == 1


def test_nothing_listening_is_unhealthy() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and is closed now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    status = healthcheck.check(f"127.0.0.1:{port}", timeout=1.0)
    assert status == "ERROR (UNAVAILABLE)"
    assert healthcheck.main([f"127.0.0.1:{port}"]) == 1


@pytest.mark.parametrize(
    ("args", "env"),
    [([], {}), ([], {"MEMLOOP_GRPC_PORT": "0"}), (["no-port"], {}), (["a:b:c", "svc", "extra"], {})],
)
def test_bad_usage_exits_2(args: list[str], env: dict[str, str]) -> None:
    assert healthcheck.main(args, env) == 2
