"""The fuzzed stack (one per session of this folder) and the printed table of what each RPC answered."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.fixtures import handle_request_from_fixture
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common.gen.memloop.v1 import memory_service_pb2 as mpb
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from tests.fixtures import load_fixture
from tests.fuzz.harness import TALLY, TENANT, Fuzzed
from tests.fuzz.strategies import KnownIds
from tests.helpers import TestInfra, random_ref


@pytest.fixture(scope="session")
def fuzzed(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    run = random_ref("fuzz").replace("-", "_")
    spec = StackSpec(
        data_dir=tmp_path_factory.mktemp("fuzz-stack"),
        database_admin_url=infra.admin_db_url,
        nats_url=infra.nats_url,
        database_prefix=run,
        subject_prefix=run,
        learning_stream=f"{run.upper()}_LEARNING",
        embedder="hashing",
    )
    stack = Stack(spec).start()
    harness = Fuzzed(stack)
    try:
        yield harness
    finally:
        harness.close()
        stack.stop()


@pytest.fixture(scope="session")
def known(fuzzed: Fuzzed) -> KnownIds:
    """Ids the stack really holds after learning Alice's requests (so fuzzing reaches real rows)."""
    import time

    import grpc

    from services.common.gen.memloop.v1 import memory_service_pb2_grpc, serving_service_pb2_grpc
    from services.common.grpc_client import sync_channel

    ids = KnownIds()
    fixture = load_fixture("alice.json")
    token = fuzzed.tokens["valid"]
    assert token is not None
    with (
        sync_channel(fuzzed.stack.services["serving"].target, token) as serving_channel,
        sync_channel(fuzzed.stack.services["memory"].target, token) as memory_channel,
    ):
        serving = serving_service_pb2_grpc.ServingServiceStub(serving_channel)
        memory = memory_service_pb2_grpc.MemoryServiceStub(memory_channel)
        events = []
        for case in fixture["requests"]:
            request = handle_request_from_fixture(fixture, case, request_id=random_ref(case["request_id"]))
            answer = serving.HandleRequest(request, timeout=30)
            ids.add(request.request_id, answer.event_id, answer.content_ref)
            events.append(answer.event_id)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = [memory.GetProcessedEvent(mpb.GetProcessedEventRequest(tenant=TENANT, event_id=e)) for e in events]
            if all(d.processed for d in done):
                break
            time.sleep(0.3)
        for m in memory.ListMemories(mpb.ListMemoriesRequest(tenant=TENANT, user="alice", page_size=100)).memories:
            ids.add(m.memory_id, m.candidate_key, m.intent_key)
        items = memory.ListReviewItems(mpb.ListReviewItemsRequest(tenant=TENANT, user="alice")).review_items
        ids.add(*(i.review_item_id for i in items))
        try:
            outbox = serving.GetOutboxEvent(spb.GetOutboxEventRequest(tenant=TENANT, event_id=events[0]))
            ids.add(outbox.event.trace_id)
        except grpc.RpcError:
            pass
    return ids


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLY.codes:
        return
    table = TALLY.table()
    terminalreporter.write_sep("=", "fuzz: what every RPC answered")
    terminalreporter.write_line(table)
    report = os.environ.get("MEMLOOP_FUZZ_REPORT", "")
    if report:
        Path(report).write_text(table + "\n")
