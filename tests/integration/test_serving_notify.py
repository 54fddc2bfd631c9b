"""Serving's commits do not queue behind another transaction's NOTIFY (MEMLOOP_SERVING_NOTIFY=after),
and with the waker (`coalesce`) its requests do not wait for a NOTIFY at all.

PostgreSQL commits every notifying transaction under one cluster-wide lock, held until its commit
record is flushed. With the relays' wake-up inside a request's transaction, every request's commit
waited for the one before it to flush. To hold that lock for as long as the test needs, a server of
its own waits for a synchronous standby that never comes: a notifying commit there stalls with the
lock held (until it is cancelled), which is what a slow WAL flush does for milliseconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import run_migrations, url_for_role
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.relay.bootstrap import libpq_url
from services.serving.adapters.postgres.new_request import add_new_request
from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL
from services.serving.adapters.postgres.relay_waker import RelayWaker, connect_for_notify
from services.serving.adapters.repository import SqlServingUnitOfWork
from services.serving.bootstrap import MIGRATIONS_DIR
from services.serving.domain.model import Email, HandleRequestCommand, NewResult, ToolOutcome
from services.serving.service.use_cases import prepare_result

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stalling_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serving's database on a server where a commit that waits for a standby waits until cancelled."""
    postgres = EmbeddedPostgres(Path(tmp_path_factory.mktemp("notify")) / "pg", durable=False).start()
    try:
        admin_url = create_database(postgres.admin_url, "serving")
        run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
        with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
            conn.execute("CREATE TABLE stall (x integer)")  # a write, so the holder's commit has a record to wait for
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
            conn.execute("SELECT pg_reload_conf()")
        yield admin_url
    finally:
        postgres.stop()


def _new() -> NewResult:
    command = HandleRequestCommand(
        request_id=f"req-{uuid.uuid4().hex[:8]}",
        tenant="acme",
        user="alice",
        thread="thr",
        route="calendar.schedule",
        procedure_versions={},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-1", "done"),),
        feedback_ref="",
        content=Email("bob@partner.example", "alice@acme.example", "s", "b"),
        attachments=(),
        reply="ok",
        owner_address="",
        trace_id="ab" * 16,
    )
    return prepare_result(command, lambda text: text, datetime.now(UTC))


def _committed(admin: psycopg.Connection[tuple[object, ...]], request_id: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if admin.execute("SELECT 1 FROM results WHERE request_id = %s", (request_id,)).fetchone():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("after", [True, False], ids=["notify-after-commit", "notify-in-transaction"])
def test_a_requests_rows_commit_while_another_notifying_commit_holds_the_notify_lock(
    stalling_server: str, after: bool
) -> None:
    admin = psycopg.connect(libpq_url(stalling_server), autocommit=True)
    # serving's own session flushes locally and waits for no standby: only the NOTIFY lock can hold it
    serving = psycopg.connect(
        libpq_url(url_for_role(stalling_server, "memloop_serving_app")), options="-c synchronous_commit=local"
    )
    new = _new()
    request = threading.Thread(
        target=_quietly(
            lambda: add_new_request(
                serving, new, with_event=True, tenant_setting="acme", commit=True, notify="after" if after else "commit"
            )
        ),
        daemon=True,
    )
    try:
        # given: another transaction's NOTIFY stalled in its commit, holding the cluster's notify lock
        with _notify_lock_held(admin, stalling_server):
            # when: serving commits a new request with its learning event
            request.start()
            # then: after its commit the rows are there although the lock is still held; inside, they wait
            assert _committed(admin, new.result.request_id, within=3.0 if after else 1.0) is after
    finally:  # the lock is free once the stalled commit was cancelled (it completes locally)
        request.join(timeout=10)
        for conn in (serving, admin):
            conn.close()
    assert not request.is_alive()
    if not after:  # and once the lock is free, the in-transaction NOTIFY's request commits too
        with psycopg.connect(libpq_url(stalling_server), autocommit=True) as check:
            assert _committed(check, new.result.request_id, within=3.0)


def _quietly(call: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        with contextlib.suppress(psycopg.Error):  # the cancelled commit warns; nothing to assert here
            call()

    return run


def test_after_its_commit_a_new_request_wakes_the_relays_once_and_a_replay_wakes_nobody(
    new_database: Callable[[str], str],
) -> None:
    admin_url = new_database("serving_notify")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
    serving = psycopg.connect(libpq_url(url_for_role(admin_url, "memloop_serving_app")))
    relay = psycopg.connect(libpq_url(admin_url), autocommit=True)
    try:
        relay.execute(f"LISTEN {NOTIFY_CHANNEL}")
        new = _new()
        assert add_new_request(serving, new, with_event=True, tenant_setting="acme", commit=True, notify="after")
        assert len(list(relay.notifies(timeout=2.0, stop_after=1))) == 1
        assert serving.execute("SHOW synchronous_commit").fetchone() == ("on",)  # the NOTIFY's setting was its own
        serving.rollback()
        again = add_new_request(serving, new, with_event=True, tenant_setting="acme", commit=True, notify="after")
        assert again is False
        assert list(relay.notifies(timeout=0.5)) == []
    finally:
        serving.close()
        relay.close()


def _backend_waits_on_a_lock(admin: psycopg.Connection[tuple[object, ...]], application_name: str) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'",
            (application_name,),
        ).fetchone():
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def _notify_lock_held(admin: psycopg.Connection[tuple[object, ...]], url: str) -> Iterator[None]:
    """Another transaction's NOTIFY stalled in its commit, holding the cluster's notify lock."""
    holder = psycopg.connect(libpq_url(url))
    thread = threading.Thread(target=_quietly(holder.commit), daemon=True)
    try:
        holder.execute("INSERT INTO stall VALUES (1)")
        holder.execute("NOTIFY elsewhere")
        thread.start()
        deadline = time.monotonic() + 10
        while not admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event = 'SyncRep'", (holder.info.backend_pid,)
        ).fetchone():
            assert time.monotonic() < deadline, "the notifying commit never stalled"
            time.sleep(0.05)
        yield
    finally:
        admin.execute("SELECT pg_cancel_backend(%s)", (holder.info.backend_pid,))
        thread.join(timeout=10)
        holder.close()


def _serving_sessions(url: str) -> tuple[Engine, sessionmaker[Session]]:
    """Serving's pool on the stalling server: its commits flush locally, waiting for no standby."""
    engine = create_engine(
        url_for_role(url, "memloop_serving_app"),
        pool_size=8,
        connect_args={"options": "-c synchronous_commit=local", "application_name": "memloop-serving"},
    )
    return engine, sessionmaker(engine, expire_on_commit=False)


def test_many_commits_wake_the_relays_with_fewer_notifies_and_after_the_last_commit(stalling_server: str) -> None:
    admin = psycopg.connect(libpq_url(stalling_server), autocommit=True)
    relay = psycopg.connect(libpq_url(stalling_server), autocommit=True)
    relay.execute(f"LISTEN {NOTIFY_CHANNEL}")
    engine, sessions = _serving_sessions(stalling_server)
    waker = RelayWaker(connect_for_notify(libpq_url(url_for_role(stalling_server, "memloop_serving_app"))))
    waker.start()
    news = [_new() for _ in range(24)]
    try:
        with _notify_lock_held(admin, stalling_server):
            # given: the waker's first NOTIFY is in flight (held up by the notify lock)
            with SqlServingUnitOfWork(sessions, "acme", wake_relays=waker.wake) as uow:
                assert uow.add_new_request(news[0], with_event=True, commit=True)
            assert _backend_waits_on_a_lock(admin, "memloop-serving-notify")

            # when: many requests commit concurrently meanwhile
            def handle(new: NewResult) -> bool:
                with SqlServingUnitOfWork(sessions, "acme", wake_relays=waker.wake) as uow:
                    return uow.add_new_request(new, with_event=True, commit=True)

            with ThreadPoolExecutor(8) as pool:
                assert all(pool.map(handle, news[1:]))  # all committed while the NOTIFY waits
        # then: once the lock is free, fewer NOTIFYs than commits arrive, and after the last
        # of them every event is committed (the relay would claim them all)
        first = list(relay.notifies(timeout=10.0, stop_after=1))
        later = list(relay.notifies(timeout=1.0))
        assert 1 <= len(first) + len(later) < len(news)
        request_ids = [new.result.request_id for new in news]
        assert admin.execute("SELECT count(*) FROM outbox WHERE request_id = ANY(%s)", (request_ids,)).fetchone() == (
            len(news),
        )
    finally:
        waker.stop()
        engine.dispose()
        relay.close()
        admin.close()


@pytest.mark.parametrize("mode", ["coalesce", "after"])
def test_a_request_does_not_wait_for_the_relays_notify_when_coalesced(stalling_server: str, mode: str) -> None:
    admin = psycopg.connect(libpq_url(stalling_server), autocommit=True)
    engine, sessions = _serving_sessions(stalling_server)
    waker = RelayWaker(connect_for_notify(libpq_url(url_for_role(stalling_server, "memloop_serving_app"))))
    waker.start()
    wake = waker.wake if mode == "coalesce" else None
    new = _new()
    returned = threading.Event()

    def handle() -> None:
        with SqlServingUnitOfWork(sessions, "acme", notify="after", wake_relays=wake) as uow:
            uow.add_new_request(new, with_event=True, commit=True)
        returned.set()

    thread = threading.Thread(target=_quietly(handle), daemon=True)
    try:
        with _notify_lock_held(admin, stalling_server):
            # given: the notify lock held; when: a request commits its event
            thread.start()
            # then: its rows commit; coalesced, the request has returned and the waker's NOTIFY
            # waits for the lock; after each commit, the request's own thread waits for it
            assert _committed(admin, new.result.request_id, within=10.0)
            if mode == "coalesce":
                assert returned.wait(timeout=10.0)
                assert _backend_waits_on_a_lock(admin, "memloop-serving-notify")
            else:
                assert _backend_waits_on_a_lock(admin, "memloop-serving")
                assert not returned.is_set()
    finally:
        thread.join(timeout=10)
        waker.stop()
        engine.dispose()
        admin.close()
    assert returned.is_set()
