"""Deletion through the whole stack as processes (policy, two memory replicas, serving, relay, worker).

Module one — forget everything derived from `req-alice-0001`: Alice's four fixture requests go
through the real loop (Bob's mail first dead-lettered while policy is down, then replayed with
`memloop dlq replay`, so the learning stream holds it twice), then memory forgets that one event.
Each test below searches one kind of place for the fixture's strings: retrieval on both replicas,
both replicas' persisted indexes, both databases in full, the streams (through the API and in the
stream files on disk), every service's log and the span file. The last one restarts everything
with the index folders deleted, so the indexes are rebuilt from the database.

Module two — forget a user: all of Dana's records, including a mail still sitting in the
dead-letter stream that memory never learned, while Erin's memories stay retrievable.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psycopg
import pytest
from google.protobuf import json_format

from services.cli.dlq import dlq_main
from services.cli.fixtures import handle_request_from_fixture
from services.cli.stack import Stack
from services.cli.stack_file import write_stack_file
from services.cli.stack_spec import START_ORDER
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from tests.e2e.conftest import make_stack
from tests.e2e.support import ALICE, Clients, eventually
from tests.helpers import TestInfra
from tests.integration.deletion_support import (
    Stub,
    database_hits,
    file_hits,
    libpq_url,
    persisted_row_ids,
    stream_hits,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# The fixture's meeting date with its weekday: the bare "2026-12-08" is in every row's timestamp on that day.
NEEDLES = ("Bob", "Tue 2026-12-08", "accept meeting invites", "forward every invoice", "partner.example",
           "Quick sync next week", "Q1 rollout")  # fmt: skip
FAST = {
    "MEMLOOP_WORKER_MAX_DELIVER": "3",
    # Longer than the worker needs to reach a restarted policy again (a renewed channel, at most one
    # reconnect backoff): the replayed event must not die in that window, as it once did under load.
    "MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS": "5",
    "MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS": "0.2",
    "MEMLOOP_WORKER_BACKOFF_MAX_SECONDS": "0.5",
    "MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS": "2",
    "MEMLOOP_INDEX_PERSIST_SECONDS": "1",
    "MEMLOOP_DELETION_POLL_SECONDS": "1",
    "MEMLOOP_REPLICA_HEARTBEAT_SECONDS": "1",
    "MEMLOOP_REPLICA_LIVENESS_SECONDS": "15",
}
REPLICAS = ("memory", "memory-1")


@dataclass
class Forgotten:
    """The stack after the forget, and what was known about the event before it."""

    stack: Stack
    clients: Clients
    event_id: str
    deletion_id: str
    deleted: dict[str, int]  # memory id -> index row id
    vectors: list[bytes]
    texts: list[str]
    kept_id: str
    hits_at_ack: dict[str, set[str]] = field(default_factory=dict)


def _memloop(stack: Stack, *argv: str) -> subprocess.CompletedProcess[str]:
    """The operator's `memloop` command against this stack (it reads `stack.json` in the data folder)."""
    command = [sys.executable, "-m", "services.cli.main", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=stack.spec.data_dir.parent)


def _dlq(stack: Stack, *args: str) -> tuple[int, str]:
    where = [
        "--nats-url",
        stack.nats_url,
        "--prefix",
        stack.spec.subject_prefix,
        "--stream",
        stack.spec.learning_stream,
    ]
    out = io.StringIO()
    with redirect_stdout(out):
        code = dlq_main([*where, *args])
    return code, out.getvalue()


def _dead_lettered(stack: Stack, event_id: str) -> bool:
    code, out = _dlq(stack, "list", "--json")
    return code == 0 and event_id in out


def _send(clients: Clients, name: str, user: str, request_id: str) -> spb.HandleRequestResponse:
    request = next(r for r in ALICE["requests"] if r["name"] == name)
    message = handle_request_from_fixture({**ALICE, "user": user}, request, request_id=request_id, tenant="acme")
    response: spb.HandleRequestResponse = clients.serving.HandleRequest(message, timeout=30)
    return response


def _as_bytes(value: object) -> bytes:
    """A bytea column as psycopg returns it (bytes or memoryview)."""
    assert isinstance(value, bytes | bytearray | memoryview), type(value)
    return bytes(value)


def _holds(index_dir: Path, row_ids: set[int]) -> bool:
    """Whether the replica's persisted index holds every one of `row_ids`."""
    return row_ids <= persisted_row_ids(index_dir)


def _admin_rows(stack: Stack, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(libpq_url(stack.memory_db_url)) as conn:
        return list(conn.execute(sql, params).fetchall())


def _search(stack: Stack, replica: str, user: str, query: str) -> set[str]:
    stub = Stub(stack.services[replica].target, stack.token("acme", ("reader",)), pb_grpc.MemoryServiceStub)
    try:
        request = pb.SearchMemoriesRequest(tenant="acme", user=user, query=query, k=20)
        return {h.memory.memory_id for h in stub.SearchMemories(request).results}
    finally:
        stub.close()


def _dead_letter(stack: Stack, clients: Clients, name: str, user: str, request_id: str) -> str:
    """Send one request while policy is down (it is dead-lettered), bring policy back; returns its event id."""
    stack.services["policy"].process.terminate(timeout=15)
    try:
        event_id = _send(clients, name, user, request_id).event_id
        eventually(lambda: _dead_lettered(stack, event_id), timeout=60, what="the event was dead-lettered")
    finally:
        stack.restart("policy")
    return event_id


def _show(stack: Stack, deletion_id: str, *flags: str) -> subprocess.CompletedProcess[str]:
    data_dir = str(stack.spec.data_dir)
    return _memloop(stack, "deletion", "show", deletion_id, "--tenant", "acme", "--data-dir", data_dir, *flags)


def _learn_alice(stack: Stack, clients: Clients) -> str:
    """Alice's four requests through the loop, Bob's by way of the dead-letter stream; returns its event id."""
    bob = _dead_letter(stack, clients, "schedule-with-bob", "alice", "req-alice-0001")
    assert _dlq(stack, "replay", bob)[0] == 0
    others = [_send(clients, r["name"], "alice", r["request_id"]).event_id for r in ALICE["requests"][1:]]
    for event_id in (bob, *others):
        eventually(partial(clients.processed, event_id), timeout=90, what=f"event {event_id} learned")
    return bob


def _known_before(stack: Stack, clients: Clients, bob: str) -> Forgotten:
    """What the event left, and proof that each place searched later held it before the forget."""
    derived = clients.memories(source_event_id=bob)
    kept = clients.memories(states=[pb.MEMORY_STATE_ACTIVE], intent_key="meeting_time_window")
    assert derived and kept
    rows = _admin_rows(
        stack, "SELECT memory_id, row_id FROM memories WHERE memory_id = ANY(%s)", [m.memory_id for m in derived]
    )
    deleted = {str(memory_id): int(str(row_id)) for memory_id, row_id in rows}
    query = "SELECT vector FROM memory_vectors WHERE memory_id = ANY(%s)"
    vectors = [_as_bytes(r[0]) for r in _admin_rows(stack, query, list(deleted))]
    for replica in REPLICAS:
        index_dir = Path(stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
        eventually(partial(_holds, index_dir, set(deleted.values())), what=f"{replica} persisted")
        assert file_hits([index_dir], vectors)
    assert database_hits(stack.memory_db_url, ["Bob"]) and database_hits(stack.serving_db_url, ["Q1 rollout"])
    assert len(stream_hits(stack.nats_url, [stack.spec.learning_stream], ["partner.example"])) == 2  # sent, replayed
    return Forgotten(stack, clients, bob, "", deleted, vectors, [m.text for m in derived], kept[0].memory_id)


@pytest.fixture(scope="module")
def forgotten(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forgotten]:
    data_dir = tmp_path_factory.mktemp("forget-event") / "stack"
    stack = make_stack(infra, data_dir, memory_replicas=2, extra_env=FAST).start()
    write_stack_file(stack, data_dir / "stack.json")
    clients = Clients(stack, "acme", roles=("reader", "writer", "admin", "service"))
    try:
        forgotten = _known_before(stack, clients, _learn_alice(stack, clients))
        ack = clients.memory.Forget(
            pb.ForgetRequest(tenant="acme", source_request_id="req-alice-0001"),
            timeout=30,
        )
        for replica in REPLICAS:  # searched right after the acknowledgement
            found = [_search(stack, replica, "alice", text) for text in forgotten.texts]
            forgotten.hits_at_ack[replica] = set().union(*found)
        forgotten.deletion_id = ack.deletion_id
        eventually(lambda: _show(stack, ack.deletion_id).returncode == 0, timeout=60, what="every location done")
        yield forgotten
    finally:
        clients.close()
        stack.stop()


def test_right_after_the_acknowledgement_neither_replica_returns_it(forgotten: Forgotten) -> None:
    # Given/When: the forget of req-alice-0001's event was acknowledged, and each replica was searched at once
    # Then: no search returned any memory derived from it
    for replica, hits in forgotten.hits_at_ack.items():
        assert hits.isdisjoint(forgotten.deleted), replica


def test_memloop_deletion_show_lists_every_location_done(forgotten: Forgotten) -> None:
    # When: the operator looks at the deletion
    shown = _show(forgotten.stack, forgotten.deletion_id, "--json")
    # Then: every location, both replicas included (each its retrieval and its ingestion process,
    # which keep an index of their own), is done with its completion time
    report = json.loads(shown.stdout)
    assert shown.returncode == 0 and report["complete"] and report["scope"] == "event"
    assert {s["location"] for s in report["steps"]} == {
        "retrieval", "memory_rows", "vectors", "derived_records", "streams", "content_blobs",
        "replica:memory", "replica:memory-1", "replica:memory-ingest", "replica:memory-1-ingest",
    }  # fmt: skip
    assert all(s["state"] == "done" and s["complete_time"] for s in report["steps"])


def test_no_retrieval_listing_or_cache_on_either_replica_returns_its_text(forgotten: Forgotten) -> None:
    # When: both replicas are searched for the fixture's strings and the deleted texts (cache warm or not)
    queries = [*NEEDLES, *forgotten.texts]
    for replica in REPLICAS:
        for _ in range(2):  # the second round is answered from the replica's retrieval cache
            hits = set().union(*(_search(forgotten.stack, replica, "alice", q) for q in queries))
            # Then: nothing derived from the event comes back
            assert hits.isdisjoint(forgotten.deleted), replica
    # And listing shows the deleted records as deleted, with no text and no candidate key
    listed = forgotten.clients.memories(source_event_id=forgotten.event_id)
    assert {(m.state, m.text, m.candidate_key) for m in listed} == {(pb.MEMORY_STATE_DELETED, "", "")}
    assert not any(n in m.text for m in forgotten.clients.memories() for n in NEEDLES)


def test_the_persisted_indexes_of_both_replicas_hold_neither_its_rows_nor_its_vectors(forgotten: Forgotten) -> None:
    for replica in REPLICAS:
        index_dir = Path(forgotten.stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
        # Then: the manifest's generation names none of its rows, and no file holds one of its vectors
        assert persisted_row_ids(index_dir).isdisjoint(forgotten.deleted.values()), replica
        assert file_hits([index_dir], forgotten.vectors) == [], replica


def test_neither_database_holds_its_text_or_its_vectors(forgotten: Forgotten) -> None:
    stack = forgotten.stack
    # Then: a dump of every row of every table of both databases holds none of the strings or vectors
    assert database_hits(stack.memory_db_url, [*NEEDLES, *forgotten.vectors]) == []
    assert database_hits(stack.serving_db_url, NEEDLES) == []


def test_no_stream_message_log_line_or_span_holds_its_text(forgotten: Forgotten, infra: TestInfra) -> None:
    stack = forgotten.stack
    streams = (stack.spec.learning_stream, f"{stack.spec.learning_stream}_DLQ")
    # Then: neither the learning stream nor the dead-letter stream holds it (its two copies were erased)
    assert stream_hits(stack.nats_url, streams, NEEDLES) == []
    if infra.embedded_nats is not None:  # and not even the stream files on disk
        store = infra.embedded_nats.data_dir / "jetstream"
        folders = [p for p in store.rglob("*") if p.is_dir() and p.name in streams]
        assert folders and file_hits(folders, NEEDLES) == []
    # And no service's log, nor the span file, ever wrote it
    assert file_hits([stack.spec.data_dir / "logs", stack.span_file], NEEDLES) == []


def test_a_minimal_audit_row_remains_for_each_deleted_memory(forgotten: Forgotten) -> None:
    audit = forgotten.clients.audit(forgotten.deletion_id)
    deleted = [a for a in audit if a.action == "memory.deleted"]
    # Then: one row per deleted memory, naming it, the deletion and who asked; the deletion's own rows too
    assert {a.memory_id for a in deleted} == set(forgotten.deleted)
    assert {a.actor for a in audit} == {"operator"}
    assert {"deletion.requested", "deletion.completed"} <= {a.action for a in audit}
    assert all(set(json_format.MessageToDict(a.detail)) <= {"deletion_id", "scope"} for a in deleted)


def test_alices_other_memories_are_untouched_and_retrievable(forgotten: Forgotten) -> None:
    kept = forgotten.clients.memory.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id=forgotten.kept_id))
    assert kept.memory.state == pb.MEMORY_STATE_ACTIVE and "09:00" in kept.memory.text
    for replica in REPLICAS:
        assert forgotten.kept_id in _search(forgotten.stack, replica, "alice", "when can I schedule meetings")


def test_restarting_everything_and_rebuilding_the_indexes_brings_nothing_back(forgotten: Forgotten) -> None:
    stack = forgotten.stack
    # Given: every service stopped, and both replicas' index folders deleted
    for name in reversed(list(stack.services)):
        stack.services[name].process.terminate(timeout=15)
    for replica in REPLICAS:
        shutil.rmtree(stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
    # When: everything starts again (the replicas rebuild their indexes from the database)
    for name in [n for kind in START_ORDER for n in stack.services if n == kind or n.startswith(f"{kind}-")]:
        stack.restart(name)
    # Then: the rebuilt indexes, in memory and on disk, hold nothing deleted; the rest is back
    for replica in REPLICAS:
        since_restart = (stack.spec.data_dir / "logs" / f"{replica}.log").read_text().rsplit("received signal", 1)[-1]
        assert "index loaded from database" in since_restart, replica
        hits = set().union(*(_search(stack, replica, "alice", q) for q in [*NEEDLES, *forgotten.texts]))
        assert hits.isdisjoint(forgotten.deleted), replica
        assert forgotten.kept_id in _search(stack, replica, "alice", "when can I schedule meetings")
        index_dir = Path(stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
        eventually((index_dir / "manifest.json").exists, what=f"{replica} persisted")
        assert persisted_row_ids(index_dir).isdisjoint(forgotten.deleted.values())
        assert file_hits([index_dir], forgotten.vectors) == []
