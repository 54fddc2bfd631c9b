"""GetContext against the memory process: one read returning what SearchMemories and
ListApplicableProcedures return, with provenance and a version that names exactly that context."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from services.common.context_version import CONTEXT_VERSION_KEY
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.grpc_errors import error_details
from services.common.vocabulary import MemoryType
from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.procedures_support import Procedures
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, apply_request, decision, token

pytestmark = pytest.mark.integration
QUERY = "when can I schedule meetings with Alice"


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("memory"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-a")


def _context(stub: object, **fields: object) -> pb.GetContextResponse:
    values: dict[str, object] = {"tenant": "acme", "user": "alice", "query": QUERY, "k": 10, **fields}
    request = pb.GetContextRequest(**values)  # type: ignore[arg-type]
    return stub.GetContext(request)  # type: ignore[attr-defined, no-any-return]


def test_context_is_the_search_plus_the_applicable_procedures_with_a_stable_version(node: MemoryNode) -> None:
    # Given alice's memories (one superseded, one deprecated), bob's, and an active procedure
    stub = node.stub()
    ten, nine = random_ref("evt"), random_ref("evt")
    stub.ApplyLearning(apply_request(ten, decision("Meetings after 10:00 please", intent="meeting_time_window")))
    stub.ApplyLearning(apply_request(nine, decision("Meetings after 09:00 are fine", intent="meeting_time_window")))
    stub.ApplyLearning(apply_request(random_ref("evt"), decision("Met Bob on Tuesday", kind=MemoryType.EPISODE)))
    retired = stub.ApplyLearning(apply_request(random_ref("evt"), decision("Prefers meetings by video"))).applied[0]
    stub.DeprecateMemory(pb.DeprecateMemoryRequest(tenant="acme", memory_id=retired.memory_id, reason="stale"))
    stub.ApplyLearning(apply_request(random_ref("evt"), decision("Bob meets after 08:00", user="bob"), user="bob"))
    officer = Procedures(node, "acme", "reviewer")
    saved = officer.save("ask for proof of trading address").learned_procedure
    # When the agent asks for its context
    reader = node.stub(token("acme", ("reader",)))
    found = _context(reader)
    # Then the memories are exactly SearchMemories' answer: active, alice's, best first
    search = reader.SearchMemories(pb.SearchMemoriesRequest(tenant="acme", user="alice", query=QUERY, k=10))
    assert [h.memory.memory_id for h in found.memories] == [h.memory.memory_id for h in search.results]
    assert all(h.memory.state == pb.MEMORY_STATE_ACTIVE and h.memory.user == "alice" for h in found.memories)
    texts = [h.memory.text for h in found.memories]
    assert not any("10:00" in t or "video" in t or "08:00" in t for t in texts)
    # Then each carries its provenance
    top = next(h.memory for h in found.memories if "09:00" in h.memory.text)
    assert list(top.source_event_ids) == [nine] and top.trace_id and top.policy_version == "policy-test-1"
    assert top.confidence == pytest.approx(0.95)
    # Then the applicable procedure comes with its version, and the map to hand back to serving
    assert [(p.procedure_id, p.version) for p in found.procedures] == [(saved.procedure_id, saved.version)]
    assert dict(found.procedure_versions) == {
        saved.intent_key: str(saved.version),
        CONTEXT_VERSION_KEY: found.context_version,
    }
    # Then the same state gives the same version; a new procedure version gives another
    assert _context(reader).context_version == found.context_version
    officer.save("ask for proof of trading address and a bank letter")
    assert _context(reader).context_version != found.context_version
    # Then a type filter applies as in SearchMemories
    episodes = _context(reader, types=[cpb.MEMORY_TYPE_EPISODE])
    assert [h.memory.type for h in episodes.memories] == [cpb.MEMORY_TYPE_EPISODE]


def test_context_is_authorized_and_validated_like_search(node: MemoryNode) -> None:
    other = node.stub(token("globex", ("reader",)), tenant="globex")
    cases: tuple[tuple[Callable[[], object], grpc.StatusCode, str | None], ...] = (
        (lambda: _context(other), grpc.StatusCode.PERMISSION_DENIED, None),
        (lambda: _context(node.stub(), k=-1), grpc.StatusCode.INVALID_ARGUMENT, "k"),
        (lambda: _context(node.stub(), user=""), grpc.StatusCode.INVALID_ARGUMENT, "user"),
        (lambda: _context(node.stub(), query=""), grpc.StatusCode.INVALID_ARGUMENT, "query"),
        (
            lambda: _context(node.stub(), procedure_scope="x" * 5000),
            grpc.StatusCode.INVALID_ARGUMENT,
            "procedure_scope",
        ),
    )
    for call, code, field in cases:
        with pytest.raises(grpc.RpcError) as caught:
            call()
        assert caught.value.code() == code
        if field:
            assert error_details(caught.value)[1] == [field]
