"""Serving's commits do not queue behind another transaction's NOTIFY (MEMLOOP_SERVING_NOTIFY=after).

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
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from services.common.db import run_migrations, url_for_role
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.relay.bootstrap import libpq_url
from services.serving.adapters.postgres.new_request import add_new_request
from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL
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
    holder = psycopg.connect(libpq_url(stalling_server))
    # serving's own session flushes locally and waits for no standby: only the NOTIFY lock can hold it
    serving = psycopg.connect(
        libpq_url(url_for_role(stalling_server, "memloop_serving_app")), options="-c synchronous_commit=local"
    )
    threads: list[threading.Thread] = []
    try:
        # given: another transaction's NOTIFY stalled in its commit, holding the cluster's notify lock
        holder.execute("INSERT INTO stall VALUES (1)")
        holder.execute("NOTIFY elsewhere")
        threads.append(threading.Thread(target=_quietly(holder.commit), daemon=True))
        threads[-1].start()
        deadline = time.monotonic() + 10
        while not admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event = 'SyncRep'", (holder.info.backend_pid,)
        ).fetchone():
            assert time.monotonic() < deadline, "the notifying commit never stalled"
            time.sleep(0.05)

        # when: serving commits a new request with its learning event
        new = _new()
        threads.append(
            threading.Thread(
                target=_quietly(
                    lambda: add_new_request(
                        serving, new, with_event=True, tenant_setting="acme", commit=True, notify_after_commit=after
                    )
                ),
                daemon=True,
            )
        )
        threads[-1].start()

        # then: after its commit the rows are there although the lock is still held; inside, they wait
        assert _committed(admin, new.result.request_id, within=3.0 if after else 1.0) is after
    finally:
        admin.execute("SELECT pg_cancel_backend(%s)", (holder.info.backend_pid,))  # its commit completes locally
        for thread in threads:
            thread.join(timeout=10)
        for conn in (serving, holder, admin):
            conn.close()
    assert not any(thread.is_alive() for thread in threads)
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
        assert add_new_request(
            serving, new, with_event=True, tenant_setting="acme", commit=True, notify_after_commit=True
        )
        assert len(list(relay.notifies(timeout=2.0, stop_after=1))) == 1
        assert serving.execute("SHOW synchronous_commit").fetchone() == ("on",)  # the NOTIFY's setting was its own
        serving.rollback()
        again = add_new_request(
            serving, new, with_event=True, tenant_setting="acme", commit=True, notify_after_commit=True
        )
        assert again is False
        assert list(relay.notifies(timeout=0.5)) == []
    finally:
        serving.close()
        relay.close()
