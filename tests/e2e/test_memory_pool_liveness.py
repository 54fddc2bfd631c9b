"""Memory's pools find a dead connection by its socket, not by a ping per checkout (issue 15: the
ping was about a tenth of memory's busy samples under learning load). What must still hold: after
the server closed every memory connection (a restart, a failover, an idle timeout), the next
search and the next learned event go through on their first try; no caller sees a dead one."""

from __future__ import annotations

import time
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


def test_search_and_learning_go_through_at_once_after_memorys_connections_were_killed(
    stack: Stack, clients: Clients
) -> None:
    first = clients.serving.HandleRequest(alice_request("schedule-with-bob", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(first.event_id) or None, what="the first event was learned")
    search = pb.SearchMemoriesRequest(tenant=clients.tenant, user="alice", query="meetings", k=5)
    clients.memory.SearchMemories(search, timeout=10)  # the read pool now holds a connection

    assert _kill_memory_backends(stack) > 0, "memory held no connection to kill"

    clients.memory.SearchMemories(search, timeout=10)  # raises if a dead connection was handed out
    second = clients.serving.HandleRequest(alice_request("preference-after-ten", clients.tenant), timeout=10)
    eventually(lambda: clients.processed(second.event_id) or None, what="an event after the kill was learned")
    processed = pb.GetProcessedEventRequest(tenant=clients.tenant, event_id=second.event_id)
    assert clients.memory.GetProcessedEvent(processed, timeout=10).processed
