"""A memory replica restarted at the other MiniLM precision (MEMLOOP_MEMORY_ENCODER_PRECISION), against
real PostgreSQL: it re-embeds the active memories under the new precision's name and search still
finds them; the fp32 vectors stay, so switching back embeds nothing."""

from __future__ import annotations

import json
from dataclasses import replace

import psycopg
import pytest

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.vocabulary import MemoryType
from tests.fixtures import fixture_path
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision

pytestmark = pytest.mark.integration

INTENT = "meeting_time_window"
QUERY = "when can I schedule meetings with Alice"


def _vectors_by_embedder(cluster: MemoryCluster) -> dict[str, int]:
    url = cluster.database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT embedder, count(*) FROM memory_vectors GROUP BY embedder").fetchall()
    return {str(name): int(count) for name, count in rows}


def _at(node: MemoryNode, precision: str) -> MemoryNode:
    return replace(node, env={**node.env, "MEMLOOP_MEMORY_ENCODER_PRECISION": precision}, stubs=[])


def test_a_replica_restarted_in_int8_re_embeds_its_memories_and_search_still_finds_them(
    cluster: MemoryCluster,
) -> None:
    # Given Alice's meeting preference and Bob's sync stored by a replica in fp32 (the default)
    requests = {r["name"]: r for r in json.loads(fixture_path("alice.json").read_text())["requests"]}
    node = cluster.start("memory-precision", embedder="minilm")
    stub = node.stub()
    stored = stub.ApplyLearning(
        apply_request(
            "evt-precision",
            decision(requests["preference-after-nine"]["content"]["body"], intent=INTENT),
            decision("Booked a sync with Bob on 2026-12-08", kind=MemoryType.EPISODE),
        )
    )
    memory_ids = {applied.memory_id for applied in stored.applied}
    assert _vectors_by_embedder(cluster) == {"all-MiniLM-L6-v2": 2}
    # When it restarts in int8 on the same database and index folder
    node = cluster.restart(_at(node, "int8"))
    # Then every active memory has an int8 vector beside its fp32 one
    assert _vectors_by_embedder(cluster) == {"all-MiniLM-L6-v2": 2, "all-MiniLM-L6-v2+int8": 2}
    assert "rebuilding" in node.log()
    # And search finds Alice's preference first, not nothing
    hits = node.stub().SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query=QUERY, k=10)).results
    assert {h.memory.memory_id for h in hits} == memory_ids and "09:00" in hits[0].memory.text
    # And back in fp32 nothing more is stored: the fp32 vectors were kept
    node = cluster.restart(_at(node, "fp32"))
    hits = node.stub().SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query=QUERY, k=10)).results
    assert {h.memory.memory_id for h in hits} == memory_ids
    assert _vectors_by_embedder(cluster) == {"all-MiniLM-L6-v2": 2, "all-MiniLM-L6-v2+int8": 2}
