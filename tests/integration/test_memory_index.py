"""Derived FAISS indexes: persisted across restarts, rebuilt from stored vectors, kept current on replicas."""

from __future__ import annotations

import functools
import shutil

import pytest

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.infra.processes import free_port
from tests.helpers import random_ref
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, Stub, apply_request, decision, wait_until

pytestmark = pytest.mark.integration

USERS = ("alice", "bob", "carol")
QUERIES = ("when can I schedule meetings", "how should replies be written", "where does the user work")
Results = dict[tuple[str, str], list[tuple[str, float]]]


def _learn(stub: Stub, user: str) -> None:
    facts = [
        ("meetings after 10:00", "meeting_time_window"),
        ("meetings after 09:00 are fine", "meeting_time_window"),
        ("replies should be short and friendly", "reply_style"),
        ("works at Northwind in Lisbon", "employer"),
        ("works at Contoso in Porto", "employer"),
        ("likes agendas sent the day before", ""),
        ("prefers video calls over phone calls", ""),
    ]
    for text, intent in facts:
        stub.ApplyLearning(
            apply_request(random_ref("evt"), decision(f"{user} {text}", intent=intent, user=user), user=user)
        )


def _search_all(stub: Stub) -> Results:
    results: Results = {}
    for user in USERS:
        for query in QUERIES:
            hits = stub.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user=user, query=query, k=5)).results
            results[(user, query)] = [(h.memory.memory_id, round(h.score, 5)) for h in hits]
    return results


def _watermark(node: MemoryNode) -> float:
    return node.metric("memloop_index_watermark", replica=node.name)


def test_restart_loads_the_index_without_reembedding_and_a_rebuild_gives_identical_results(
    cluster: MemoryCluster,
) -> None:
    # Given: a replica that learned 21 memories (6 of them superseded since) and answered queries
    node = cluster.start("memory-a")
    stub = node.stub()
    for user in USERS:
        _learn(stub, user)
    before, watermark = _search_all(stub), _watermark(node)
    assert all(before.values()) and watermark > 0
    # (every memory's vector was stored by the write that made it: the index embedded none itself)
    assert node.metric("memloop_index_vectors_filled_total", replica=node.name) == 0
    # When: it restarts
    node = cluster.restart(node)
    # Then: the index came from disk at the same watermark, no memory was embedded again, results identical
    assert node.metric("memloop_index_loads_total", source="disk") == 1
    assert f"index loaded from disk at watermark {int(watermark)}; caught up 0 changes" in node.log()
    assert _watermark(node) == watermark
    assert _search_all(node.stub()) == before
    assert node.metric("memloop_embedded_texts_total", kind="document") == 0
    # When: the index files are deleted and it restarts again
    node.process.terminate()
    shutil.rmtree(cluster.index_dir(node))
    node = cluster.restart(node)
    # Then: it rebuilt from the vectors stored in PostgreSQL, still without embedding, with identical results
    assert node.metric("memloop_index_loads_total", source="database") == 1
    assert node.metric("memloop_embedded_texts_total", kind="document") == 0
    assert node.metric("memloop_index_vectors", replica=node.name) == 3 * 5
    assert node.metric("memloop_index_vectors_filled_total", replica=node.name) == 0
    assert _watermark(node) == watermark
    assert _search_all(node.stub()) == before


def test_a_replica_restarted_from_an_old_index_catches_up_with_what_others_wrote(cluster: MemoryCluster) -> None:
    # Given: replica A persisted its index, then stopped; replica B kept writing, superseding A's records
    a, b = cluster.start("memory-a"), cluster.start("memory-b")
    _learn(a.stub(), "alice")
    a.process.terminate()
    _learn(b.stub(), "bob")
    b.stub().ApplyLearning(
        apply_request(random_ref("evt"), decision("alice meetings after 08:00", intent="meeting_time_window"))
    )
    # When: A starts from its stale files
    a = cluster.restart(a)
    # Then: A loaded from disk, applied the missed changes from the feed, and answers exactly like B
    assert a.metric("memloop_index_loads_total", source="disk") == 1
    assert a.metric("memloop_embedded_texts_total", kind="document") == 0
    assert _search_all(a.stub()) == _search_all(b.stub())
    texts = [
        h.memory.text
        for h in a.stub()
        .SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query="meetings", k=10))
        .results
    ]
    assert "alice meetings after 08:00" in texts and not any("09:00" in t or "10:00" in t for t in texts)


def _shows(stub: Stub, text: str) -> bool:
    return text in _texts(stub, "meetings")


def _texts(stub: Stub, query: str) -> list[str]:
    hits = stub.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query=query, k=10)).results
    return [h.memory.text for h in hits]


@pytest.mark.parametrize("notices", [True, False], ids=["nats-notices", "polling-only"])
def test_supersede_via_replica_a_is_never_returned_by_replica_b(cluster: MemoryCluster, notices: bool) -> None:
    # Given: two replicas of one database; B learns of changes by NATS notices (its poll is slow),
    # or, when notices are lost (B's NATS is unreachable), only by polling the database watermark
    a = cluster.start("memory-a")
    b_env = (
        {"memloop_index_poll_seconds": "30"}
        if notices
        else {
            "memloop_nats_url": f"nats://127.0.0.1:{free_port()}",
            "memloop_index_poll_seconds": "0.5",
        }
    )
    b = cluster.start("memory-b", **b_env)
    stub_a, stub_b = a.stub(), b.stub()
    current = (
        stub_a.ApplyLearning(
            apply_request(random_ref("evt"), decision("meetings after 10:00", intent="meeting_time_window"))
        )
        .applied[0]
        .memory_id
    )
    assert wait_until(lambda: "meetings after 10:00" in _texts(stub_b, "meetings"), timeout=10)
    for round_ in range(8):
        # When: A supersedes the active record
        new = stub_a.SupersedeMemory(
            pb.SupersedeMemoryRequest(
                tenant="acme", memory_id=current, text=f"meetings after 09:{round_:02d}", request_id=random_ref("req")
            )
        ).memory
        # Then: from the moment A acknowledged, B never returns the old record, and soon returns the new one
        seen_new = False
        for _ in range(200):
            hits = stub_b.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query="meetings", k=10))
            ids = [h.memory.memory_id for h in hits.results]
            assert current not in ids
            if new.memory_id in ids:
                seen_new = True
                break
        assert seen_new or wait_until(functools.partial(_shows, stub_b, new.text), timeout=5)
        current = new.memory_id
    assert wait_until(lambda: _watermark(b) == _watermark(a), timeout=5)
