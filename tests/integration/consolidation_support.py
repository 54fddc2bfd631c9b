"""Helpers for the consolidation integration tests: the memory process, its two stubs, Priya's
turns through ApplyLearning, the store as observed over gRPC, and the test-only pause files.

Not fixtures and no tests. The memory process is started the way the memory tests start it
(`MemoryCluster`, hashing embedder), with the sleep-time triggers off unless a test turns them on,
so the only jobs that run are the ones a test asks for.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from services.common.auth import bearer_metadata
from services.common.convert import decision_to_pb
from services.common.gen.memloop.v1 import consolidation_service_pb2 as cs
from services.common.gen.memloop.v1 import consolidation_service_pb2_grpc as cs_grpc
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Sensitivity, candidate_key
from tests.fixtures import fixture_path
from tests.helpers import sign_decisions
from tests.integration.test_memory_support import MemoryCluster, MemoryNode, Stub, token

FIXTURE = fixture_path("priya_sessions.json")
USER = "priya"
_PREFERENCE_WORDS = ("prefers", "likes", "enjoys", "dislikes", "wants")
RUNNING = cs.CONSOLIDATION_JOB_STATE_RUNNING
SUCCEEDED = cs.CONSOLIDATION_JOB_STATE_SUCCEEDED
SKIPPED_BUSY = cs.CONSOLIDATION_JOB_STATE_SKIPPED_BUSY
FAILED = cs.CONSOLIDATION_JOB_STATE_FAILED


def fixture() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text())
    return loaded


@dataclass(frozen=True)
class Turn:
    """One memory of the conversation; one learning event (`evt-s<session>-<index>`) per turn."""

    session: int
    index: int
    text: str

    @property
    def event_id(self) -> str:
        return f"evt-s{self.session:02d}-{self.index}"


def priya_turns() -> list[Turn]:
    return [Turn(s["session"], i, text) for s in fixture()["sessions"] for i, text in enumerate(s["memories"])]


def start_memory(cluster: MemoryCluster, name: str, pauses: Path, **extra: str) -> MemoryNode:
    """A memory replica with the triggers off (unless `extra` sets them) and the pause folder on."""
    settings = {
        "MEMLOOP_CONSOLIDATE_AFTER_MEMORIES": "0",
        "MEMLOOP_CONSOLIDATE_IDLE_SECONDS": "0",
        "MEMLOOP_CONSOLIDATE_POLL_SECONDS": "0.5",
        "MEMLOOP_FAULT_CONSOLIDATION_PAUSE_DIR": str(pauses),
        "MEMLOOP_LOG_LEVEL": "WARNING",
    }
    return cluster.start(name, **{**settings, **extra})


class Jobs:
    """A ConsolidationService stub with a bearer token and a deadline on every call."""

    def __init__(self, port: int, bearer: str) -> None:
        self._channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self._stub = cs_grpc.ConsolidationServiceStub(self._channel)
        self._metadata = bearer_metadata(bearer)

    def run(self, tenant: str, user: str = USER, *, wait: bool = False, request_id: str = "") -> cs.ConsolidationJob:
        request = cs.RunConsolidationRequest(tenant=tenant, user=user, wait=wait, request_id=request_id)
        return self._stub.RunConsolidation(request, metadata=self._metadata, timeout=120).job

    def get(self, tenant: str, job_id: str) -> cs.ConsolidationJob:
        request = cs.GetConsolidationJobRequest(tenant=tenant, job_id=job_id)
        return self._stub.GetConsolidationJob(request, metadata=self._metadata, timeout=30).job

    def list(
        self, tenant: str, user: str = "", *, page_size: int = 0, page_token: str = ""
    ) -> cs.ListConsolidationJobsResponse:
        request = cs.ListConsolidationJobsRequest(tenant=tenant, user=user, page_size=page_size, page_token=page_token)
        return self._stub.ListConsolidationJobs(request, metadata=self._metadata, timeout=30)

    def close(self) -> None:
        self._channel.close()


def jobs_stub(node: MemoryNode, *, tenant: str = "acme", roles: tuple[str, ...] = ("service", "reader")) -> Jobs:
    return Jobs(node.port, token(tenant, roles))


def turn_request(tenant: str, *turns: Turn, user: str = USER, event_id: str = "") -> pb.ApplyLearningRequest:
    """One learning event storing `turns` (one turn per event in the conversation)."""
    event = event_id or turns[0].event_id
    decisions = [decision_to_pb(_store(tenant, user, t.text, event)) for t in turns]
    trace_id = (event.encode().hex() + "0" * 32)[:32]
    request = pb.ApplyLearningRequest(event_id=event, trace_id=trace_id, tenant=tenant, user=user, decisions=decisions)
    signed: pb.ApplyLearningRequest = sign_decisions(request)  # as policy signs: memory accepts no other decision
    return signed


def _store(tenant: str, user: str, text: str, event_id: str) -> Decision:
    kind = MemoryType.PREFERENCE if any(w in text for w in _PREFERENCE_WORDS) else MemoryType.FACT
    candidate = Candidate(
        candidate_key=candidate_key(tenant, user, kind, text),
        type=kind,
        origin=Origin.OWNER,
        sensitivity=Sensitivity.NORMAL,
        confidence=0.7,
        text=text,
        event_id=event_id,
        trace_id="",
    )
    return Decision(candidate, Outcome.STORE, "policy-test-1")


def memories(stub: Stub, tenant: str, *, active_only: bool = True, user: str = USER) -> list[pb.Memory]:
    """Every memory of the user (all pages), oldest row first."""
    states = [pb.MEMORY_STATE_ACTIVE] if active_only else []
    found: list[pb.Memory] = []
    token_ = ""
    while True:
        page = stub.ListMemories(
            pb.ListMemoriesRequest(tenant=tenant, user=user, states=states, page_size=500, page_token=token_)
        )
        found += list(page.memories)
        token_ = page.next_page_token
        if not token_:
            return found


def live_set(stub: Stub, tenant: str) -> set[tuple[str, float, tuple[str, ...]]]:
    """The live store as a user sees it: text, confidence and provenance of every active memory
    (ids differ between tenants: new ids are random, new-version ids derive from them)."""
    return {(m.text, round(m.confidence, 6), tuple(sorted(m.source_event_ids))) for m in memories(stub, tenant)}


def all_rows(stub: Stub, tenant: str) -> set[tuple[str, int, str, str]]:
    """Every row with its lifecycle: what "changes nothing" and "nothing half-applied" compare."""
    return {(m.memory_id, m.state, m.supersedes, m.superseded_by) for m in memories(stub, tenant, active_only=False)}


class Pauses:
    """The test side of `adapters/fault_pause.py`: hold a job at a phase and know when it got there."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def holding(self, phase: str) -> Iterator[None]:
        (self.folder / f"reached-{phase}").unlink(missing_ok=True)
        hold = self.folder / f"hold-{phase}"
        hold.touch()
        try:
            yield
        finally:
            hold.unlink(missing_ok=True)

    def wait_reached(self, phase: str, timeout: float = 30.0) -> str:
        """The id of the job that reached `phase`; raises if none did in time."""
        marker = self.folder / f"reached-{phase}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if marker.exists():
                return marker.read_text()
            time.sleep(0.005)
        raise AssertionError(f"no job reached {phase} within {timeout}s")


@contextmanager
def background() -> Iterator[Callable[[Callable[[], Any]], Future[Any]]]:
    """Run calls on threads (a job held at a phase, a turn blocked by its locks)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield pool.submit


def still_running(future: Future[Any], seconds: float) -> bool:
    """True when `future` has not finished after `seconds` (it is blocked, as intended)."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    return not done.wait(seconds)
