"""Sleep-time consolidation runs in the ingestion process of a split replica, never beside retrieval.

A job is seconds to minutes of Python and SQL; in the retrieval process it held the GIL and a core
while searches waited (bench_context: SearchMemories p50 61 ms with the scheduler there, 4-5 ms
without). The shared stack runs memory split, with the scheduler's default trigger (20 new
memories of a user). This test writes past the trigger through the loop and reads each process's
own job counter: the job must be counted by `memory-ingest`, and no scheduled job (not even one
that lost the per-user lock, SKIPPED_BUSY) by the retrieval process. Each process's
`memloop_consolidation_scheduler_running` gauge says the same whether or not a job was contended:
1 in the ingestion process, 0 in the retrieval one (which builds no scheduler at all).
"""

from __future__ import annotations

import pytest

from services.cli.fixtures import handle_request_from_fixture
from services.cli.stack import Stack
from services.common.gen.memloop.v1 import consolidation_service_pb2 as cpb
from services.common.gen.memloop.v1 import consolidation_service_pb2_grpc as cpb_grpc
from services.common.grpc_client import sync_channel
from tests.e2e.support import ALICE, Clients, eventually, fresh_tenant, metric_sum
from tests.helpers import random_ref

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TRIGGER = 20  # MEMLOOP_CONSOLIDATE_AFTER_MEMORIES' default, which the shared stack keeps
SCHEDULED_JOBS = "memloop_consolidation_jobs_total"


def _scheduled_jobs(stack: Stack, service: str) -> float:
    """Jobs the scheduler of `service` ran (any final state), from its own /metrics."""
    return metric_sum(stack.services[service].metrics_port, SCHEDULED_JOBS, having='trigger="scheduler"')


def test_the_scheduler_runs_a_users_job_in_the_ingestion_process(stack: Stack) -> None:
    assert stack.spec.memory_split, "this test is about the split replica"
    ingest = stack.ingest_name("memory")
    running = "memloop_consolidation_scheduler_running"
    assert metric_sum(stack.services[ingest].metrics_port, running) == 1
    assert metric_sum(stack.services["memory"].metrics_port, running) == 0
    tenant = fresh_tenant()
    clients = Clients(stack, tenant)
    jobs_channel = sync_channel(stack.services["memory"].target, stack.token(tenant, roles=("reader",)))
    try:
        # Given alice's day of calls, each one remembered as an episode of its own, past the trigger
        template = next(r for r in ALICE["requests"] if r["name"] == "schedule-with-bob")
        event_ids = []
        for i in range(TRIGGER + 4):
            request = handle_request_from_fixture(ALICE, template, request_id=random_ref("req"), tenant=tenant)
            for outcome in request.tool_outcomes:
                outcome.summary = outcome.summary.replace("Sync with Bob Tan", f"Sync {i} with Bob Tan")
            event_ids.append(clients.serving.HandleRequest(request, timeout=30).event_id)
        eventually(lambda: all(clients.processed(e) for e in event_ids) or None, timeout=120, what="events learned")
        assert len(clients.memories("alice")) >= TRIGGER

        # When the scheduler notices (it polls every few seconds)
        jobs = cpb_grpc.ConsolidationServiceStub(jobs_channel)

        def alice_job() -> cpb.ConsolidationJob | None:
            request = cpb.ListConsolidationJobsRequest(tenant=tenant, user="alice")
            listed = jobs.ListConsolidationJobs(request, timeout=10)
            done = [j for j in listed.jobs if j.state == cpb.CONSOLIDATION_JOB_STATE_SUCCEEDED]
            return done[0] if done else None

        job = eventually(alice_job, timeout=120, interval=0.5, what="a scheduled job for alice")

        # Then the ingestion process ran it, and the retrieval process never ran a scheduled job
        assert job.snapshot_size >= TRIGGER
        assert _scheduled_jobs(stack, ingest) >= 1
        assert _scheduled_jobs(stack, "memory") == 0
    finally:
        jobs_channel.close()
        clients.close()
