"""Memory's pools find a dead connection by its socket, not by a ping per checkout (issue 15: the
ping was about a tenth of memory's busy samples under learning load). What must still hold: after
the server closed every memory connection (a restart, a failover, an idle timeout), the next
search and the next learned event go through on their first try; no caller sees a dead one."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator

import psycopg
import pytest

from services.cli.stack import Stack
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def clients(stack: Stack) -> Iterator[Clients]:
    made = Clients(stack, fresh_tenant())
    yield made
    made.close()


def _kill_memory_backends(stack: Stack) -> int:
    """Terminate every backend memory holds and wait until the server lists none of them."""
    url = stack.memory_db_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as admin:
        query = (
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'memloop-memory%' AND pid <> pg_backend_pid()"
        )
        pids = [pid for (pid,) in admin.execute(query).fetchall()]
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 10
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone():
            assert time.monotonic() < deadline, "memory's backends did not exit"
            time.sleep(0.05)
    return len(pids)


def _rpc_errors(stack: Stack) -> float:
    """memory's failed RPCs so far, every method (its Prometheus counter)."""
    url = f"http://127.0.0.1:{stack.services['memory'].metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        lines = response.read().decode().splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("memloop_rpc_errors_total{"))


def test_search_and_learning_go_through_at_once_after_memorys_connections_were_killed(
    stack: Stack, clients: Clients
) -> None:
    first = clients.serving.HandleRequest(alice_request("preference-after-ten", clients.tenant), timeout=10)
    eventually(lambda: clients.memories(source_event_id=first.event_id) or None, what="a memory was learned")
    search = pb.SearchMemoriesRequest(tenant=clients.tenant, user="alice", query="meetings after ten", k=5)
    # a hit is re-checked in PostgreSQL through retrieval's own pool, which now holds a connection
    # (retrieval's index follows ingestion's writes a moment later, so the first hit is waited for)
    eventually(lambda: clients.memory.SearchMemories(search, timeout=10).results, what="retrieval found the memory")

    errors_before = _rpc_errors(stack)
    assert _kill_memory_backends(stack) > 0, "memory held no connection to kill"

    # the next search re-checks its hit on a live connection: no UNAVAILABLE from a dead one
    assert clients.memory.SearchMemories(search, timeout=10).results
    second = clients.serving.HandleRequest(alice_request("preference-after-nine", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(second.event_id) or None, what="an event after the kill was learned")
    # and no call failed on the way (a dead connection handed out fails its call, which a retry hides)
    assert _rpc_errors(stack) == errors_before
