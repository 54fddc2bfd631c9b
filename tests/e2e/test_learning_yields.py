"""On one host the whole learning path yields to serving (issue 15), read from the kernel after a
real event went through the loop: the relay, the worker and policy run every thread at idle
priority, and so does memory's ingestion process; serving and memory's retrieval process keep every
thread normal (serving serves the worker's reads from idle backends); the PostgreSQL backends
follow the thread that uses them — the relay's and memory's ingestion's idle."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from services.cli.stack import Stack
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def clients(stack: Stack) -> Iterator[Clients]:
    made = Clients(stack, fresh_tenant())
    yield made
    made.close()


def _idle(tid_or_pid: int) -> bool:
    return os.sched_getscheduler(tid_or_pid) == os.SCHED_IDLE


def _threads(pid: int) -> list[int]:
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


def _sql(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _processed(url: str, event_id: str) -> bool:
    """Read by the test's own session (the admin's, RLS does not bind it): asking memory over gRPC
    would run on a normal-priority thread and hand a pooled backend back to normal."""
    with psycopg.connect(_sql(url)) as conn:
        return conn.execute("SELECT 1 FROM processed_events WHERE event_id = %s", (event_id,)).fetchone() is not None


def _backends(url: str, prefix: str) -> list[int]:
    with psycopg.connect(_sql(url)) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
            (prefix + "%",),
        ).fetchall()
    return [int(pid) for (pid,) in rows if Path(f"/proc/{pid}").exists()]


def test_the_learning_processes_and_their_backends_yield_and_serving_does_not(stack: Stack, clients: Clients) -> None:
    response = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: _processed(stack.memory_db_url, response.event_id) or None, what="the event was learned")
    for name in ("relay", "worker", "policy", stack.ingest_name("memory")):
        pid = stack.services[name].process.pid
        assert all(_idle(tid) for tid in _threads(pid)), f"a thread of {name} runs at normal priority"
    # serving and memory's retrieval process: every thread at normal priority (an idle one could be
    # parked holding the GIL), and the worker's content reads ran on an idle backend.
    for name in ("serving", "memory"):
        pid = stack.services[name].process.pid
        assert not any(_idle(tid) for tid in _threads(pid)), f"a thread of {name} was lowered"
    assert any(_idle(pid) for pid in _backends(stack.serving_db_url, "memloop-serving")), (
        "the worker's content reads ran on a normal-priority backend"
    )

    relay_backends = _backends(stack.serving_db_url, "memloop-relay")
    assert relay_backends and all(_idle(pid) for pid in relay_backends)
    # memory's ingestion process (all idle threads) applied the event on an idle backend
    ingestion = f"memloop-memory-{stack.ingest_name('memory')}"
    assert any(_idle(pid) for pid in _backends(stack.memory_db_url, ingestion))
