"""On one host the whole learning path yields to serving (issue 15), read from the kernel after a
real event went through the loop: the relay, the worker, policy, serving's loop-only process and
memory's ingestion process run every thread at idle priority, in the one scheduling group the
stack's processes share; serving and memory's retrieval process keep every thread normal, and the
worker's reads went to the loop process's idle backends; the PostgreSQL backends follow the thread
that uses them — the relay's and memory's ingestion's idle."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest

from services.cli.stack import Stack
from services.cli.stack_spec import SERVING_LOOP
from services.common.gen.memloop.v1 import serving_service_pb2_grpc
from services.common.grpc_client import sync_channel
from services.common.priority import autogroup_nice, kernel_has_autogroups
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def clients(stack: Stack) -> Iterator[Clients]:
    made = Clients(stack, fresh_tenant())
    yield made
    made.close()


def _idle(tid_or_pid: int) -> bool:
    return os.sched_getscheduler(tid_or_pid) == os.SCHED_IDLE


def _lowered_backend(pid: int) -> bool:
    """A learning backend: nice 19 (MEMLOOP_LEARNING_BACKENDS=nice, the default) or SCHED_IDLE."""
    return _idle(pid) or (os.sched_getscheduler(pid) == os.SCHED_OTHER and os.getpriority(os.PRIO_PROCESS, pid) == 19)


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
    learning = ("relay", "worker", "policy", SERVING_LOOP, stack.ingest_name("memory"))
    for name in learning:
        pid = stack.services[name].process.pid
        assert all(_idle(tid) for tid in _threads(pid)), f"a thread of {name} runs at normal priority"
    # A thread's policy only ranks it inside its scheduling group, and on a kernel with autogroups a
    # session is one: every process of the stack shares the launcher's session (its own process
    # group), so the idle threads above yield to serving's across processes, and no member lowered
    # the shared group (that would lower serving with it).
    pids = {name: handle.process.pid for name, handle in stack.services.items()}
    nats = stack.embedded_nats
    if nats is not None and nats.pid is not None:
        pids["nats-server"] = nats.pid
    for name, pid in pids.items():
        assert os.getsid(pid) == os.getsid(0), f"{name} runs in a session (a scheduling group) of its own"
        assert os.getpgid(pid) == pid, f"{name} does not lead its own process group"
    if kernel_has_autogroups():
        assert {autogroup_nice(pid) for pid in pids.values()} == {autogroup_nice(0)}, "the shared group was lowered"
    # serving and memory's retrieval process: every thread at normal priority (an idle one could be
    # parked holding the GIL).
    for name in ("serving", "memory"):
        pid = stack.services[name].process.pid
        assert not any(_idle(tid) for tid in _threads(pid)), f"a thread of {name} was lowered"
    # The worker read the event's content from serving's loop-only process, on its idle backends.
    loop_backends = _backends(stack.serving_db_url, "memloop-serving-loop")
    assert loop_backends, "the worker's content reads did not go to serving's loop process"
    assert all(_lowered_backend(pid) for pid in loop_backends), "the worker's content reads ran on a normal backend"

    relay_backends = _backends(stack.serving_db_url, "memloop-relay")
    assert relay_backends and all(_lowered_backend(pid) for pid in relay_backends)
    # memory's ingestion process (all idle threads) applied the event on an idle backend
    ingestion = f"memloop-memory-{stack.ingest_name('memory')}"
    assert any(_lowered_backend(pid) for pid in _backends(stack.memory_db_url, ingestion))


def test_the_loop_process_refuses_an_agents_request_and_nothing_is_written(stack: Stack, clients: Clients) -> None:
    """HandleRequest must never run at the idle priority the loop process runs at: it is refused
    there, by name, before anything is written; the same request to serving is answered."""
    request = alice_request("schedule-with-bob", clients.tenant)
    with sync_channel(stack.services[SERVING_LOOP].target, stack.token(clients.tenant)) as channel:
        loop = serving_service_pb2_grpc.ServingServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            loop.HandleRequest(request, timeout=10)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "MEMLOOP_SERVING_ROLE=loop" in (refused.value.details() or "")
    with psycopg.connect(_sql(stack.serving_db_url)) as conn:
        rows = conn.execute("SELECT count(*) FROM outbox WHERE tenant = %s", (clients.tenant,)).fetchone()
    assert rows is not None and rows[0] == 0
    answered = clients.serving.HandleRequest(request, timeout=10)
    assert answered.event_id
