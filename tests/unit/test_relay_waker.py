"""The relay waker coalesces wakes into NOTIFYs and never loses the last one (a fake connection)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, cast

import psycopg

from services.serving.adapters.postgres.relay_waker import RelayWaker


class _FakeConnection:
    """Records each NOTIFY; the first one blocks until `release` is set (a send in flight)."""

    def __init__(self) -> None:
        self.closed = False
        self.notifies: list[tuple[Any, ...]] = []
        self.sending = threading.Event()
        self.release = threading.Event()
        self.sent = threading.Condition()

    def execute(self, query: str, params: tuple[Any, ...]) -> None:
        if not self.notifies:
            self.sending.set()
            self.release.wait()
        with self.sent:
            self.notifies.append(params)
            self.sent.notify_all()

    def close(self) -> None:
        self.closed = True

    def wait_for(self, count: int) -> None:
        with self.sent:
            assert self.sent.wait_for(lambda: len(self.notifies) >= count, timeout=10)


@contextlib.contextmanager
def _running(*connections: _FakeConnection) -> Iterator[RelayWaker]:
    """A started waker opening `connections` in turn; on leaving, every blocked send is released and
    the waker stopped."""
    pending = list(connections)

    def connect() -> psycopg.Connection[Any]:
        return cast(psycopg.Connection[Any], pending.pop(0))

    waker = RelayWaker(connect)
    waker.start()
    try:
        yield waker
    finally:
        for conn in connections:
            conn.release.set()
        waker.stop()


def test_wakes_during_a_send_make_one_more_notify_not_one_each() -> None:
    conn = _FakeConnection()
    with _running(conn) as waker:
        # given: a first wake whose NOTIFY is in flight
        waker.wake()
        assert conn.sending.wait(timeout=10)
        # when: many commits wake the waker meanwhile
        for _ in range(50):
            waker.wake()
        conn.release.set()
        # then: one more NOTIFY follows them, sent after the last wake, not fifty
        conn.wait_for(2)
    assert len(conn.notifies) == 2
    assert conn.closed


def test_a_wake_returns_without_waiting_for_a_send_in_flight() -> None:
    conn = _FakeConnection()
    with _running(conn) as waker:
        waker.wake()
        assert conn.sending.wait(timeout=10)
        # a send is blocked on the database: waking again returns at once (this thread would hang otherwise)
        waker.wake()
        assert conn.notifies == []


def test_a_failed_send_is_retried_on_a_new_connection() -> None:
    class _Failing(_FakeConnection):
        def execute(self, query: str, params: tuple[Any, ...]) -> None:
            raise psycopg.OperationalError("server closed the connection")

    good = _FakeConnection()
    good.release.set()
    with _running(_Failing(), good) as waker:
        waker.wake()
        good.wait_for(1)
    assert len(good.notifies) == 1
