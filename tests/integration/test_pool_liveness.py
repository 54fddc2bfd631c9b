"""Serving's pool checks an idle connection's socket instead of pinging the server (issue 15: the
pre-ping was a round trip on every HandleRequest). A connection the server closed must still never
reach a caller; a live one must be handed out without any statement."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from services.common.db import LivenessCheck, make_engine

pytestmark = pytest.mark.integration


@pytest.fixture
def database(new_database: Callable[[str], str]) -> str:
    return new_database("pool_liveness")


def _one_connection_engine(url: str, liveness: LivenessCheck) -> Engine:
    engine = make_engine(url, pool_size=1, liveness=liveness)
    engine.pool._max_overflow = 0  # type: ignore[attr-defined]  # one connection: every checkout is the same one
    return engine


@pytest.fixture
def engines(database: str) -> Iterator[Callable[[LivenessCheck], Engine]]:
    made: list[Engine] = []

    def make(liveness: LivenessCheck) -> Engine:
        made.append(_one_connection_engine(database, liveness))
        return made[-1]

    yield make
    for engine in made:
        engine.dispose()


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1), autocommit=True)


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(url: str, pid: int) -> None:
    """Kill the backend and wait until the server no longer lists it (its socket is closed by then)."""
    with _admin(url) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 10
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, "the backend did not exit"
            time.sleep(0.05)


def test_a_connection_the_server_closed_is_replaced_at_checkout_and_the_caller_never_sees_it(
    database: str, engines: Callable[[LivenessCheck], Engine]
) -> None:
    # Given a pooled connection whose backend the server has since terminated
    engine = engines("socket")
    first = _backend_pid(engine)
    _terminate(database, first)

    # When the next unit of work checks a connection out and runs a statement
    second = _backend_pid(engine)

    # Then it ran, on a new backend
    assert second != first


def test_without_a_liveness_check_the_same_dead_connection_fails_its_caller(database: str) -> None:
    # Given the same pool with no check at all (what the test above guards against)
    engine = create_engine(database, pool_size=1, max_overflow=0)
    try:
        first = _backend_pid(engine)
        _terminate(database, first)

        # When a statement runs on the pooled connection, then it fails
        with pytest.raises(OperationalError):
            _backend_pid(engine)
    finally:
        engine.dispose()


@pytest.mark.parametrize(("liveness", "pings"), [("socket", False), ("query", True)])
def test_a_live_connection_is_checked_out_without_a_statement_only_with_the_socket_check(
    database: str, engines: Callable[[LivenessCheck], Engine], liveness: LivenessCheck, pings: bool
) -> None:
    # Given a pooled connection whose last statement is known
    engine = engines(liveness)
    pid = _backend_pid(engine)
    with _admin(database) as admin:
        before = _last_statement(admin, pid)

        # When it is checked out again, before its caller sends anything
        with engine.connect():
            after = _last_statement(admin, pid)

    # Then the server saw a statement at checkout only with the query check (the ping)
    assert (after != before) is pings, (before, after)


def _last_statement(admin: psycopg.Connection[tuple[object, ...]], pid: int) -> str:
    row = admin.execute(
        "SELECT query || ' @ ' || query_start::text FROM pg_stat_activity WHERE pid = %s", (pid,)
    ).fetchone()
    assert row is not None
    return str(row[0])
