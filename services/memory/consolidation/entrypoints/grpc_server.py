"""ConsolidationService servicer: authorize, validate, call the job's use case, translate back.

Permission before anything else (before existence). A busy user is not an error: the job record
comes back with state SKIPPED_BUSY and names the job that holds the user, as does a FAILED job
with its error, so operators always get a record they can Get again.
"""

from __future__ import annotations

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import require
from services.common.gen.memloop.v1 import consolidation_service_pb2 as pb
from services.common.gen.memloop.v1 import consolidation_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.common.telemetry import current_trace_id
from services.memory.consolidation.service.job import (
    ConsolidationDeps,
    RunConsolidation,
    get_job,
    list_jobs,
    run_consolidation,
)
from services.memory.consolidation.service.ports import ConsolidationJob, JobState
from services.memory.core.entrypoints.pb_mapping import timestamp
from services.memory.core.entrypoints.requests import tenant_of
from services.memory.core.service.pagination import page_request

DOMAIN = "memory.memloop"

STATE_TO_PB = {
    JobState.RUNNING: pb.CONSOLIDATION_JOB_STATE_RUNNING,
    JobState.COMPLETED: pb.CONSOLIDATION_JOB_STATE_SUCCEEDED,
    JobState.SKIPPED_BUSY: pb.CONSOLIDATION_JOB_STATE_SKIPPED_BUSY,
    JobState.FAILED: pb.CONSOLIDATION_JOB_STATE_FAILED,
}


class ConsolidationServicer(pb_grpc.ConsolidationServiceServicer):
    def __init__(self, deps: ConsolidationDeps) -> None:
        self._deps = deps

    @grpc_method(DOMAIN)
    def RunConsolidation(
        self, request: pb.RunConsolidationRequest, context: grpc.ServicerContext
    ) -> pb.RunConsolidationResponse:
        principal = authorize_tenant(request.tenant)
        command = RunConsolidation(
            tenant=tenant_of(request.tenant),
            user=require(request.user, "user"),
            wait=request.wait,
            actor=principal.subject,
            trace_id=current_trace_id(),
            request_id=request.request_id,
        )
        return pb.RunConsolidationResponse(job=job_to_pb(run_consolidation(command, self._deps)))

    @grpc_method(DOMAIN)
    def GetConsolidationJob(
        self, request: pb.GetConsolidationJobRequest, context: grpc.ServicerContext
    ) -> pb.GetConsolidationJobResponse:
        authorize_tenant(request.tenant)
        tenant, job_id = tenant_of(request.tenant), require(request.job_id, "job_id")
        return pb.GetConsolidationJobResponse(job=job_to_pb(get_job(tenant, job_id, self._deps)))

    @grpc_method(DOMAIN)
    def ListConsolidationJobs(
        self, request: pb.ListConsolidationJobsRequest, context: grpc.ServicerContext
    ) -> pb.ListConsolidationJobsResponse:
        authorize_tenant(request.tenant)
        tenant = tenant_of(request.tenant)
        filters = (tenant, request.user)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=filters)
        found = list_jobs(tenant, request.user, page, self._deps)
        return pb.ListConsolidationJobsResponse(
            jobs=[job_to_pb(j) for j in found.items], next_page_token=found.next_page_token
        )


def job_to_pb(job: ConsolidationJob) -> pb.ConsolidationJob:
    return pb.ConsolidationJob(
        job_id=job.job_id,
        tenant=job.tenant,
        user=job.user,
        state=STATE_TO_PB[job.state],
        kept=job.kept,
        retired=job.retired,
        untouched=job.untouched,
        sent_to_review=job.sent_to_review,
        error=job.error,
        start_time=timestamp(job.started_at),
        finish_time=timestamp(job.finished_at),
        deferred=job.deferred,
        snapshot_size=job.snapshot_size,
        trace_id=job.trace_id,
    )
