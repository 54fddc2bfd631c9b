"""Memory serves retrieval in the foreground and ingestion in the background, in two OS processes
(issue 15), read from the kernel while ingestion is saturated.

A SCHED_IDLE thread that the kernel parks while it holds the GIL stalls every other thread of its
process until it next gets a core, so the guarantee is not "ingestion runs on idle threads" but
"no thread that serves retrieval shares a process with an idle-priority thread". With MiniLM,
FindConflicts keeps the ingestion process busy embedding while SearchMemories runs at a steady rate
on the retrieval process; every task (thread) of both processes is read from /proc each time. With
one memory process (`memory_split=False`, the arrangement before the split) the ingestion executor's
idle threads live in the process that answers the searches, and the test fails.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from services.cli.stack import Stack
from services.common import convert
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_client import sync_channel
from services.common.vocabulary import Candidate, MemoryType, Origin, Sensitivity
from tests.e2e.conftest import make_stack
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant
from tests.helpers import TestInfra

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SEARCHES = 80
SEARCH_GAP_SECONDS = 0.05
LOADERS = 3
CANDIDATES_PER_CALL = 16
LOAD_DEADLINE_SECONDS = 120.0
_IDLE_NICE = 19


@pytest.fixture(scope="module")
def minilm_stack(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = make_stack(infra, tmp_path_factory.mktemp("split"), embedder="minilm", console=False).start()
    try:
        yield running
    finally:
        running.stop()


def _tasks(pid: int) -> dict[int, tuple[int, int]]:
    """Each task of `pid`: (scheduling policy, nice), from /proc/<pid>/task/<tid>/stat (fields 41, 19)."""
    found: dict[int, tuple[int, int]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue  # the thread ended between the listing and the read
        fields = stat[stat.rindex(")") + 2 :].split()  # fields from the 3rd (state) on
        found[int(tid)] = (int(fields[41 - 3]), int(fields[19 - 3]))
    return found


def _idle(policy_nice: tuple[int, int]) -> bool:
    policy, nice = policy_nice
    return policy == os.SCHED_IDLE or nice >= _IDLE_NICE


def _cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[14 - 3]) + int(fields[15 - 3])) / os.sysconf("SC_CLK_TCK")


def _find_conflicts(channel: grpc.Channel, tenant: str, round_: int) -> None:
    candidates = [
        convert.candidate_to_pb(
            Candidate(
                candidate_key=f"k-{round_}-{i}",
                type=MemoryType.PREFERENCE,
                origin=Origin.OWNER,
                sensitivity=Sensitivity.NORMAL,
                confidence=0.9,
                text=f"Round {round_} item {i}: keep my meetings after {9 + i % 8}:30, mornings are for focus work.",
                event_id=f"evt-load-{round_}",
                trace_id="0" * 32,
                intent_key="meeting_time_window",
            )
        )
        for i in range(CANDIDATES_PER_CALL)
    ]
    request = pb.FindConflictsRequest(tenant=tenant, user="alice", candidates=candidates)
    pb_grpc.MemoryServiceStub(channel).FindConflicts(request, timeout=60)


def test_searches_under_saturated_ingestion_never_share_a_process_with_idle_threads(minilm_stack: Stack) -> None:
    stack = minilm_stack
    retrieval = stack.services["memory"]
    ingestion = stack.services[stack.ingest_name("memory")]
    clients = Clients(stack, fresh_tenant())
    try:
        # Given: a memory learned through the whole loop (worker → ingestion process), retrievable
        # on the retrieval process once its change notice arrived
        learned = clients.serving.HandleRequest(alice_request("preference-after-ten", clients.tenant), timeout=10)
        eventually(lambda: clients.processed(learned.event_id), what="the event was learned")
        search = pb.SearchMemoriesRequest(tenant=clients.tenant, user="alice", query="meetings after ten", k=5)
        eventually(lambda: len(clients.memory.SearchMemories(search, timeout=10).results) > 0, what="retrievable")

        # When: ingestion is saturated (FindConflicts embeds with MiniLM, from several callers) ...
        stop = threading.Event()
        calls = itertools.count()
        completed: list[int] = []
        errors: list[BaseException] = []

        def load() -> None:
            with sync_channel(ingestion.target, stack.service_token()) as channel:
                deadline = time.monotonic() + LOAD_DEADLINE_SECONDS
                while not stop.is_set() and time.monotonic() < deadline:
                    try:
                        _find_conflicts(channel, clients.tenant, next(calls))
                        completed.append(1)
                    except grpc.RpcError as error:
                        errors.append(error)
                        return

        loaders = [threading.Thread(target=load, name=f"ingest-load-{i}") for i in range(LOADERS)]
        for loader in loaders:
            loader.start()
        ingest_cpu_before = _cpu_seconds(ingestion.process.pid)
        retrieval_tasks: dict[int, tuple[int, int]] = {}
        ingestion_tasks: dict[int, tuple[int, int]] = {}
        answered = 0
        try:
            eventually(lambda: len(completed) >= LOADERS or errors, interval=0.05, what="ingestion under load")
            # ... while SearchMemories runs at a steady rate on the retrieval process
            for _ in range(SEARCHES):
                if clients.memory.SearchMemories(search, timeout=10).results:
                    answered += 1
                for tid, seen in _tasks(retrieval.process.pid).items():
                    retrieval_tasks.setdefault(tid, seen)
                    if _idle(seen):
                        retrieval_tasks[tid] = seen
                ingestion_tasks.update(_tasks(ingestion.process.pid))
                time.sleep(SEARCH_GAP_SECONDS)
        finally:
            stop.set()
            for loader in loaders:
                loader.join(LOAD_DEADLINE_SECONDS)
        ingest_busy = _cpu_seconds(ingestion.process.pid) - ingest_cpu_before

        # Then: ingestion did run (busy, no failed call) and every search answered ...
        assert not errors, errors[:1]
        assert ingest_busy > 1.0, f"the ingestion process used only {ingest_busy:.2f} CPU-s: not saturated"
        assert answered == SEARCHES
        # ... no thread of the retrieval process ever ran at idle priority, so no retrieval thread
        # shared its process (and its GIL) with an idle-priority thread ...
        idle_threads = {tid: seen for tid, seen in retrieval_tasks.items() if _idle(seen)}
        assert not idle_threads, f"retrieval's process had idle-priority threads: {idle_threads}"
        # ... because ingestion ran in a process of its own, all of it at idle priority
        assert retrieval.process.pid != ingestion.process.pid
        assert ingestion_tasks and all(_idle(seen) for seen in ingestion_tasks.values()), (
            "a thread of the ingestion process ran at normal priority"
        )
    finally:
        clients.close()
