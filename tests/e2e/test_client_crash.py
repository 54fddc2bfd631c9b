"""A kill -9 of serving during `record` is absorbed by the client: one committed result, and
`replayed` says whether the answer came from the attempt that committed or from a later one.

Crashes made certain rather than timed:

- serving killed while its transaction waits on a lock the test holds, and its backend terminated
  with it (nothing committed: the retry commits, `replayed` False);
- serving killed there but its backend left alive: serving sends BEGIN, the inserts and COMMIT in
  one pipelined round trip, so the backend already holds the COMMIT and commits once the lock is
  released, after the process that sent it is gone (the retry finds that commit, `replayed` True);
- serving killed after it committed while a proxy holds its answer back (the retry finds the
  commit, `replayed` True).

Every way, the tenant has exactly one result and one outbox event for the request id.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from memloop_client import Client, Email, RecordResult, RetryPolicy, trace_context
from services.cli.stack import Stack
from tests.e2e.support import eventually, fresh_tenant
from tests.e2e.tcp_proxy import HoldingProxy

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
PATIENT = RetryPolicy(total_deadline=180.0, attempt_timeout=60.0, initial_backoff=0.1, max_backoff=1.0)
MAIL = Email("alice@acme.example", "assistant@acme.example", "Scheduling", "Please keep my meetings after 10:00.")


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _client(stack: Stack, tenant: str, serving: str = "") -> Client:
    return Client(
        serving=serving or stack.services["serving"].target,
        memory=stack.services["memory"].target,
        tenant=tenant,
        token=lambda: stack.token(tenant, roles=("reader", "writer")),
        retry=PATIENT,
    )


def _record(client: Client) -> RecordResult:
    return client.record("alice", thread="thr-crash", route="assistant.instruction", reply="Noted.", email=MAIL)


def _committed(stack: Stack, tenant: str) -> list[tuple[str, str, int]]:
    """(request id, event id, outbox rows for it) of every result the tenant has, oldest first."""
    with psycopg.connect(_libpq(stack.serving_db_url)) as conn:
        rows = conn.execute(
            "SELECT r.request_id, r.event_id, (SELECT count(*) FROM outbox o WHERE o.tenant = r.tenant"
            " AND o.request_id = r.request_id) FROM results r WHERE r.tenant = %s ORDER BY r.committed_at",
            (tenant,),
        ).fetchall()
    return [(str(a), str(b), int(c)) for a, b, c in rows]


def _backends_waiting_on_the_lock(stack: Stack) -> list[int]:
    with psycopg.connect(_libpq(stack.serving_db_url)) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query ILIKE '%%INSERT INTO results%%'"
        ).fetchall()
    return [int(pid) for (pid,) in rows]


def _terminate(stack: Stack, pids: list[int]) -> None:
    with psycopg.connect(_libpq(stack.serving_db_url), autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    _wait_gone(stack, pids, "the terminated backend is gone")


def _wait_gone(stack: Stack, pids: list[int], what: str) -> None:
    with psycopg.connect(_libpq(stack.serving_db_url), autocommit=True) as conn:
        eventually(
            lambda: not conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone(),
            timeout=30,
            what=what,
        )


def _kill_inside_the_transaction(stack: Stack, backend_survives: bool) -> tuple[str, RecordResult, bool]:
    """Serving killed while its insert waits on a lock; returns the tenant, the client's result, and
    whether the dead process's own transaction committed (read before serving comes back)."""
    tenant = fresh_tenant()
    with psycopg.connect(_libpq(stack.serving_db_url)) as blocker, _client(stack, tenant) as client:
        # Given serving's insert held inside its transaction by a lock the test holds
        blocker.execute("LOCK TABLE results IN SHARE MODE")
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(_record, client)
            waiting = eventually(
                lambda: _backends_waiting_on_the_lock(stack), timeout=60, what="serving's insert waits on the lock"
            )
            # When serving is killed mid-call (and its backend too, or not), the lock is released and
            # the surviving backend finishes what it was sent, and serving comes back
            stack.services["serving"].process.kill()
            if not backend_survives:
                _terminate(stack, waiting)
            blocker.rollback()
            _wait_gone(stack, waiting, "the dead process's backend has finished")
            dead_committed = bool(_committed(stack, tenant))
            stack.restart("serving")
            result = pending.result(timeout=200)
    return tenant, result, dead_committed


@pytest.mark.parametrize("backend_survives", [False, True], ids=["backend-dies-too", "backend-survives"])
def test_serving_killed_inside_its_transaction_one_result_commits(stack: Stack, backend_survives: bool) -> None:
    # psycopg sends a pipeline's statements one by one and its Sync (the implicit transaction's
    # commit) last, while the backend waits on the lock from the INSERT on: a kill between the two
    # leaves a surviving backend nothing to commit (seen once on a loaded machine). What the dead
    # process's transaction did is read before serving comes back, and the survivor case is tried
    # on a fresh tenant, up to three times, until its commit was sent.
    for _ in range(3):
        tenant, result, dead_committed = _kill_inside_the_transaction(stack, backend_survives)
        # Then exactly one result committed, and the retry answers it as a replay exactly when the
        # dead process's pipelined commit committed it
        assert result.replayed is dead_committed and result.attempts >= 2
        assert _committed(stack, tenant) == [(result.request_id, result.event_id, 1)]
        if dead_committed is backend_survives:
            break
    # by the retry (not a replay) when the backend died, by the dead process's commit when it survived
    assert result.replayed is backend_survives


def test_serving_killed_after_commit_the_retry_returns_the_commit_as_a_replay(stack: Stack) -> None:
    tenant = fresh_tenant()
    proxy = HoldingProxy(stack.services["serving"].grpc_port)
    try:
        with _client(stack, tenant, serving=proxy.target) as client:
            first = _record(client)  # the connection through the proxy is up
            # Given serving's answers held back by the proxy
            proxy.hold()
            with ThreadPoolExecutor(1) as pool:
                pending = pool.submit(_record, client)
                eventually(lambda: len(_committed(stack, tenant)) == 2, timeout=60, what="the second record commits")
                # When serving is killed after committing, before its answer got out, and comes back
                stack.services["serving"].process.kill()
                proxy.release()
                stack.restart("serving")
                result = pending.result(timeout=200)
    finally:
        proxy.close()
    # Then the retry returned the committed result, marked as a replay; nothing was written twice
    assert result.replayed and result.attempts >= 2
    committed = _committed(stack, tenant)
    assert committed == [(first.request_id, first.event_id, 1), (result.request_id, result.event_id, 1)]


def test_the_callers_trace_context_reaches_serving(stack: Stack) -> None:
    # Given a caller inside a W3C trace
    trace_id = uuid.uuid4().hex
    with _client(stack, fresh_tenant()) as client, trace_context(f"00-{trace_id}-{uuid.uuid4().hex[:16]}-01"):
        # When it records
        result = _record(client)
    # Then serving committed the result (and its learning event) under the caller's trace
    assert result.trace_id == trace_id
