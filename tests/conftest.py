"""Shared test infrastructure: real PostgreSQL and NATS for the session, per-test databases and names,
service processes that are always cleaned up.

With MEMLOOP_TEST_DATABASE_URL and MEMLOOP_TEST_NATS_URL set, tests run against those servers (CI's
second pass); otherwise an embedded PostgreSQL and nats-server start in a temporary folder the first
time a test asks for `infra`, so `pytest tests/unit` starts nothing. Every test names its databases,
streams and subjects uniquely, so runs never interfere and never need cleanup on shared servers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

from services.common.infra import InfraError
from services.common.infra import nats as nats_infra
from services.common.infra import postgres as pg_infra
from services.common.infra.nats import EmbeddedNats
from services.common.infra.postgres import EmbeddedPostgres
from services.common.infra.processes import ServiceProcess, log_tail, terminate_all
from services.common.nats_connect import connect_nats
from tests.helpers import SpawnService, TestInfra, random_ref

DATABASE_URL_ENV = "MEMLOOP_TEST_DATABASE_URL"
NATS_URL_ENV = "MEMLOOP_TEST_NATS_URL"
NATS_MONITOR_URL_ENV = "MEMLOOP_TEST_NATS_MONITOR_URL"
KEEP_ENV = "MEMLOOP_TEST_KEEP"  # set to 1 to keep the embedded data folder and the test databases
SERVICE_HEALTHY_TIMEOUT = 60.0

# SIGTERM and SIGHUP stop a run as Ctrl-C does (fixtures torn down, no stack left running); the
# suites can run on two xdist workers (ports, modules and the `quiet` mark: tests/parallel_workers.py).
pytest_plugins = ["tests.stop_on_signal", "tests.parallel_workers"]


@pytest.fixture(scope="session")
def infra(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestInfra]:
    """The session's PostgreSQL (admin URL) and NATS, external when the environment names them.

    The embedded servers' folder goes when the session ends; after a failure their logs are copied
    into the session's base folder first (`make test` keeps that folder when a run fails), since the
    server's own words are often the only account of an error a service reported in one line.
    """
    database_url = os.environ.get(DATABASE_URL_ENV, "").strip()
    nats_url = os.environ.get(NATS_URL_ENV, "").strip()
    if bool(database_url) != bool(nats_url):
        raise pytest.UsageError(f"set both {DATABASE_URL_ENV} and {NATS_URL_ENV}, or neither (embedded servers)")
    if database_url:
        pg_infra.wait_ready(database_url, timeout=30.0)
        nats_infra.wait_ready(nats_url, timeout=30.0)
        yield TestInfra(
            admin_db_url=database_url,
            nats_url=nats_url,
            nats_monitor_url=os.environ.get(NATS_MONITOR_URL_ENV, "").strip() or None,
            embedded_nats=None,
            external=True,
        )
        return

    root = Path(tempfile.mkdtemp(prefix="memloop-test-"))
    postgres = EmbeddedPostgres(root / "pg", durable=False, log_path=root / "postgres.log")
    embedded_nats = EmbeddedNats(root / "nats", log_path=root / "nats-server.log")
    try:
        postgres.start()
        embedded_nats.start()
        yield TestInfra(
            admin_db_url=postgres.admin_url,
            nats_url=embedded_nats.url,
            nats_monitor_url=embedded_nats.monitor_url,
            embedded_nats=embedded_nats,
            external=False,
        )
    finally:
        keep = os.environ.get(KEEP_ENV) == "1"
        embedded_nats.stop()
        postgres.stop(checkpoint=keep)  # a checkpoint of hundreds of test databases, for nothing
        if request.session.testsfailed:
            kept = tmp_path_factory.getbasetemp() / "servers"
            kept.mkdir(exist_ok=True)
            for log in (root / "postgres.log", root / "nats-server.log"):
                with contextlib.suppress(OSError):
                    shutil.copy2(log, kept / log.name)
        if not keep:
            _remove_in_background(root)


def _remove_in_background(root: Path) -> None:
    """Delete the session's data folder without making pytest wait for it.

    By the end of a full run it holds every test database of the session; removing them took
    seconds that the run's exit waited for. A shell starts `rm` in the background and exits at
    once, so the `rm` (its own session, adopted by init) outlives pytest and leaves no child behind.
    """
    try:
        subprocess.run(
            ["sh", "-c", 'rm -rf -- "$1" >/dev/null 2>&1 &', "sh", str(root)],
            stdin=subprocess.DEVNULL,
            check=True,
            start_new_session=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def _test_databases(infra: TestInfra) -> Iterator[list[str]]:
    """Names of the databases tests created; dropped at the end of the session on external servers.

    Dropping at session end, not per test, means no spawned service still holds a connection.
    """
    names: list[str] = []
    yield names
    if infra.external and os.environ.get(KEEP_ENV) != "1":
        for name in names:
            with contextlib.suppress(InfraError):
                pg_infra.drop_database(infra.admin_db_url, name)


@pytest.fixture
def new_database(infra: TestInfra, _test_databases: list[str]) -> Callable[[str], str]:
    """Factory: `new_database("memory")` creates an empty, uniquely named database and returns its URL."""

    def create(prefix: str) -> str:
        name = _database_name(prefix)
        url = pg_infra.create_database(infra.admin_db_url, name)
        _test_databases.append(name)
        return url

    return create


def _database_name(prefix: str) -> str:
    """`prefix` made a plain lower-case identifier (no quoting needed anywhere), plus a random suffix."""
    cleaned = re.sub(r"[^a-z0-9_]+", "_", prefix.lower()).strip("_")[:40] or "test"
    return random_ref(cleaned).replace("-", "_")


@pytest.fixture(scope="session")
def _nats_prefixes(infra: TestInfra) -> Iterator[list[str]]:
    """Prefixes handed out this session; on external NATS their streams are deleted at the end."""
    prefixes: list[str] = []
    yield prefixes
    if infra.external and prefixes and os.environ.get(KEEP_ENV) != "1":
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, _delete_streams(infra.nats_url, prefixes)).result()


@pytest.fixture
def nats_prefix(_nats_prefixes: list[str]) -> str:
    """A unique token (letters, digits, `_`) to start this test's stream names and subjects with."""
    prefix = random_ref("t").replace("-", "_")
    _nats_prefixes.append(prefix)
    return prefix


async def _delete_streams(url: str, prefixes: list[str]) -> None:
    """Best effort: a leftover stream on a shared server costs disk, never a wrong result."""
    lowered = tuple(prefix.lower() for prefix in prefixes)
    with contextlib.suppress(Exception):
        client = await connect_nats(url, connect_timeout=5, allow_reconnect=False)
        try:
            js = client.jetstream()
            names: list[str] = []
            while True:
                page = json.loads(
                    (await client.request("$JS.API.STREAM.NAMES", json.dumps({"offset": len(names)}).encode())).data
                )
                names += page.get("streams") or []
                if not page.get("streams") or len(names) >= page.get("total", 0):
                    break
            for name in names:
                if name.lower().startswith(lowered):
                    with contextlib.suppress(Exception):
                        await js.delete_stream(name)
        finally:
            await client.close()


@pytest.fixture
def spawn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SpawnService]:
    """Factory: `spawn(module, env, port, name)` starts `python -m module`, waits for health SERVING.

    Everything spawned is terminated (SIGTERM, then SIGKILL) at teardown; when the test failed,
    the tail of each service's log is printed, so the failure report shows what the services said.
    """
    spawned: list[ServiceProcess] = []

    def start(module: str, env: dict[str, str], port: int, name: str) -> ServiceProcess:
        process = ServiceProcess(module, env, log_path=tmp_path / f"{name}.log", name=name).start()
        spawned.append(process)
        process.wait_healthy(port, "", timeout=SERVICE_HEALTHY_TIMEOUT)
        return process

    yield start

    terminate_all(list(reversed(spawned)), timeout=10.0)
    report = getattr(request.node, "_memloop_call_report", None)
    if report is not None and report.failed:
        for process in spawned:
            sys.stderr.write(f"--- {process.name}: {process.log_path} ---\n{log_tail(process.log_path, 60)}\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, object, object]:
    """Remember the call phase's report on the item, for fixtures that print more on failure."""
    report = yield
    if call.when == "call":
        item._memloop_call_report = report  # type: ignore[attr-defined]
    return report
