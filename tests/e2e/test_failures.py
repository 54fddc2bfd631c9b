"""The loop under failure, whole stack as processes: memory down beyond the retry budget
dead-letters the event with its reason while the backlog's age shows in the worker's metrics;
`memloop dlq replay` after recovery yields the memories an undisturbed run yields."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from services.cli.dlq import dlq_main
from services.cli.stack import Stack
from services.common.gen.memloop.v1 import memory_service_pb2
from tests.e2e.conftest import make_stack
from tests.e2e.support import Clients, alice_request, eventually, fresh_tenant, metric
from tests.helpers import TestInfra

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

FAST_FAILURE = {
    "MEMLOOP_WORKER_MAX_DELIVER": "3",
    "MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS": "4",
    "MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS": "0.3",
    "MEMLOOP_WORKER_BACKOFF_MAX_SECONDS": "1",
    "MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS": "2",
    "MEMLOOP_WORKER_METRICS_POLL_SECONDS": "0.5",
}


@pytest.fixture(scope="module")
def failing_stack(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = make_stack(infra, tmp_path_factory.mktemp("failing"), extra_env=FAST_FAILURE).start()
    try:
        yield running
    finally:
        running.stop()


def _dlq(stack: Stack, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = dlq_main(
            [
                "--nats-url",
                stack.nats_url,
                "--prefix",
                stack.spec.subject_prefix,
                "--stream",
                stack.spec.learning_stream,
                *args,
            ]
        )
    return code, out.getvalue()


def _active_texts(clients: Clients) -> list[str]:
    return sorted(m.text for m in clients.memories(states=[memory_service_pb2.MEMORY_STATE_ACTIVE]))


def test_memory_outage_dead_letters_then_replay_gives_the_undisturbed_result(
    failing_stack: Stack, tmp_path: Path
) -> None:
    stack = failing_stack
    control, disturbed = Clients(stack, fresh_tenant()), Clients(stack, fresh_tenant())
    try:
        # Given an undisturbed run for one tenant
        first = control.serving.HandleRequest(alice_request("schedule-with-bob", control.tenant), timeout=10)
        eventually(lambda: control.processed(first.event_id), what="the control event was learned")
        undisturbed = _active_texts(control)

        # When memory's ingestion (the worker's peer) is down and the same mail arrives for another tenant
        stack.services[stack.ingest_name("memory")].process.terminate(timeout=15)
        response = disturbed.serving.HandleRequest(alice_request("schedule-with-bob", disturbed.tenant), timeout=10)
        worker_metrics = stack.services["worker"].metrics_port
        # Then the backlog's age is visible in the worker's metrics during the outage
        age = eventually(
            lambda: (metric(worker_metrics, "memloop_worker_consumer_oldest_pending_age_seconds") or 0) > 0.5 or None,
            timeout=30,
            what="oldest pending age rose during the outage",
        )
        assert age
        # And once the retry budget is spent, the event is dead-lettered with its reason
        listing = eventually(
            lambda: _dlq_entry(stack, response.event_id), timeout=60, what="the event reached the dead-letter stream"
        )
        assert listing["reason"] == "RETRIES_EXHAUSTED"
        assert int(str(listing["attempts"])) >= 3
    finally:
        stack.restart(stack.ingest_name("memory"))
    try:
        # When memory is back and the operator replays the dead letter
        code, _ = _dlq(stack, "replay", response.event_id)
        assert code == 0
        eventually(lambda: disturbed.processed(response.event_id), what="the replayed event was learned")
        # Then the memories equal the undisturbed run's, and the dead-letter stream no longer holds it
        assert _active_texts(disturbed) == undisturbed
        assert _dlq_entry(stack, response.event_id) is None
    finally:
        control.close()
        disturbed.close()


def _dlq_entry(stack: Stack, event_id: str) -> dict[str, object] | None:
    code, out = _dlq(stack, "list", "--json")
    if code != 0:
        return None
    entries = (
        json.loads(out) if out.strip().startswith("[") else [json.loads(line) for line in out.splitlines() if line]
    )
    return next((e for e in entries if e.get("event_id") == event_id), None)
