"""MemoryService servicer: authorize, validate into a command, call the use case, translate back.

Permission is checked before anything else (before existence), by the server bootstrap from the
one roles table in `services.common.access`; domain errors are mapped to canonical status codes by
`@grpc_method`. The token's subject is recorded as who acted.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import InvalidArgument, require
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.common.priority import run_in
from services.memory.core.entrypoints import requests
from services.memory.core.entrypoints.pb_mapping import (
    audit_event_to_pb,
    item_result_to_pb,
    memory_to_pb,
    outcome_to_response,
    review_item_to_pb,
    scored_to_pb,
    timestamp,
)
from services.memory.core.service import lifecycle, queries, retrieval, review
from services.memory.core.service.apply_learning import ApplyLearning, apply_learning, apply_learning_batch
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.pagination import page_request

DOMAIN = "memory.memloop"
_T = TypeVar("_T")


class CoreMemoryRpcs(pb_grpc.MemoryServiceServicer):
    """MemoryService's core RPCs; the deletion RPCs of the same proto service come from the deletion
    capability, and `services.memory.entrypoints.grpc_server` joins both into the one servicer."""

    def __init__(self, ports: MemoryPorts, ingest: Executor | None = None, reads: MemoryPorts | None = None) -> None:
        """`reads`: the ports of the read-only RPCs that may be served from a standby (GetMemory,
        ListMemories, GetLineage, SearchMemories; see core/adapters/standby_reads.py); default `ports`."""
        self._ports = ports
        self._reads = reads or ports
        self._ingest = ingest

    def _ingesting(self, work: Callable[[], _T]) -> _T:
        """Run learning-path work (embedding, conflicts, apply, the index catch-up after its commit)
        on the ingestion executor, whose threads run at idle priority (issue 15), and wait for it.

        The gRPC thread only waits, so retrieval RPCs on the other server threads keep normal
        priority. The call's context (principal, trace) travels with the work.
        """
        return run_in(self._ingest, work)

    @grpc_method(DOMAIN)
    def ApplyLearning(
        self, request: pb.ApplyLearningRequest, context: grpc.ServicerContext
    ) -> pb.ApplyLearningResponse:
        principal = authorize_tenant(request.tenant)
        command = requests.apply_learning(request, actor=principal.subject)
        return outcome_to_response(self._ingesting(lambda: apply_learning(command, self._ports)))

    @grpc_method(DOMAIN)
    def BatchApplyLearning(
        self, request: pb.BatchApplyLearningRequest, context: grpc.ServicerContext
    ) -> pb.BatchApplyLearningResponse:
        principal = authorize_tenant(request.tenant)
        _tenant, items = requests.apply_learning_batch(request, actor=principal.subject)
        commands = [item for item in items if isinstance(item, ApplyLearning)]
        applied = iter(self._ingesting(lambda: apply_learning_batch(commands, self._ports)) if commands else [])
        results = [item if isinstance(item, InvalidArgument) else next(applied) for item in items]
        return pb.BatchApplyLearningResponse(
            results=[
                item_result_to_pb(message.event_id, result, domain=DOMAIN)
                for message, result in zip(request.requests, results, strict=True)
            ]
        )

    @grpc_method(DOMAIN)
    def GetProcessedEvent(
        self, request: pb.GetProcessedEventRequest, context: grpc.ServicerContext
    ) -> pb.GetProcessedEventResponse:
        authorize_tenant(request.tenant)
        tenant, event_id = requests.tenant_of(request.tenant), require(request.event_id, "event_id")
        found = queries.get_processed_event(tenant, event_id, self._ports)
        if found is None:
            return pb.GetProcessedEventResponse(processed=False)
        outcome, processed_at = found
        return pb.GetProcessedEventResponse(
            processed=True, outcome=outcome_to_response(outcome), process_time=timestamp(processed_at)
        )

    @grpc_method(DOMAIN)
    def BatchGetProcessedEvents(
        self, request: pb.BatchGetProcessedEventsRequest, context: grpc.ServicerContext
    ) -> pb.BatchGetProcessedEventsResponse:
        authorize_tenant(request.tenant)
        tenant = requests.tenant_of(request.tenant)
        event_ids = [require(event_id, f"event_ids[{i}]") for i, event_id in enumerate(request.event_ids)]
        # The worker's first step for every batch: learning-path work, so its statement runs on an
        # idle thread (and an idle backend) like the apply that follows.
        found = self._ingesting(lambda: queries.get_processed_events(tenant, event_ids, self._ports))
        return pb.BatchGetProcessedEventsResponse(
            processed_events=[
                pb.GetProcessedEventResponse(
                    processed=True, outcome=outcome_to_response(found[e][0]), process_time=timestamp(found[e][1])
                )
                if e in found
                else pb.GetProcessedEventResponse(processed=False)
                for e in event_ids
            ]
        )

    @grpc_method(DOMAIN)
    def GetMemory(self, request: pb.GetMemoryRequest, context: grpc.ServicerContext) -> pb.GetMemoryResponse:
        authorize_tenant(request.tenant)
        tenant, memory_id = requests.tenant_of(request.tenant), require(request.memory_id, "memory_id")
        return pb.GetMemoryResponse(memory=memory_to_pb(queries.get_memory(tenant, memory_id, self._reads)))

    @grpc_method(DOMAIN)
    def ListMemories(self, request: pb.ListMemoriesRequest, context: grpc.ServicerContext) -> pb.ListMemoriesResponse:
        authorize_tenant(request.tenant)
        tenant, where = requests.tenant_of(request.tenant), requests.memory_filter(request)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=(tenant, where))
        found = queries.list_memories(tenant, where, page, self._reads)
        return pb.ListMemoriesResponse(
            memories=[memory_to_pb(m) for m in found.items], next_page_token=found.next_page_token
        )

    @grpc_method(DOMAIN)
    def GetLineage(self, request: pb.GetLineageRequest, context: grpc.ServicerContext) -> pb.GetLineageResponse:
        authorize_tenant(request.tenant)
        tenant, memory_id = requests.tenant_of(request.tenant), require(request.memory_id, "memory_id")
        chain = queries.get_lineage(tenant, memory_id, self._reads)
        return pb.GetLineageResponse(chain=[memory_to_pb(m) for m in chain])

    @grpc_method(DOMAIN)
    def SupersedeMemory(
        self, request: pb.SupersedeMemoryRequest, context: grpc.ServicerContext
    ) -> pb.SupersedeMemoryResponse:
        principal = authorize_tenant(request.tenant)
        new, old = lifecycle.supersede_memory(requests.supersede(request, actor=principal.subject), self._ports)
        return pb.SupersedeMemoryResponse(memory=memory_to_pb(new), superseded=memory_to_pb(old))

    @grpc_method(DOMAIN)
    def DeprecateMemory(
        self, request: pb.DeprecateMemoryRequest, context: grpc.ServicerContext
    ) -> pb.DeprecateMemoryResponse:
        principal = authorize_tenant(request.tenant)
        record = lifecycle.deprecate_memory(requests.deprecate(request, actor=principal.subject), self._ports)
        return pb.DeprecateMemoryResponse(memory=memory_to_pb(record))

    @grpc_method(DOMAIN)
    def FindConflicts(
        self, request: pb.FindConflictsRequest, context: grpc.ServicerContext
    ) -> pb.FindConflictsResponse:
        authorize_tenant(request.tenant)
        tenant, user = requests.tenant_of(request.tenant), require(request.user, "user")
        candidates = requests.candidates(request)
        found = self._ingesting(lambda: retrieval.find_conflicts(tenant, user, candidates, self._ports))
        return pb.FindConflictsResponse(
            results=[
                pb.CandidateConflicts(candidate_key=key, conflicts=[memory_to_pb(m) for m in conflicts])
                for key, conflicts in found
            ]
        )

    @grpc_method(DOMAIN)
    def BatchFindConflicts(
        self, request: pb.BatchFindConflictsRequest, context: grpc.ServicerContext
    ) -> pb.BatchFindConflictsResponse:
        authorize_tenant(request.tenant)
        tenant, items = requests.find_conflicts_batch(request)
        found = self._ingesting(lambda: retrieval.find_conflicts_many(tenant, items, self._ports))
        return pb.BatchFindConflictsResponse(
            responses=[
                pb.FindConflictsResponse(
                    results=[
                        pb.CandidateConflicts(candidate_key=key, conflicts=[memory_to_pb(m) for m in conflicts])
                        for key, conflicts in answer
                    ]
                )
                for answer in found
            ]
        )

    @grpc_method(DOMAIN)
    def SearchMemories(
        self, request: pb.SearchMemoriesRequest, context: grpc.ServicerContext
    ) -> pb.SearchMemoriesResponse:
        authorize_tenant(request.tenant)
        tuning = self._ports.tuning
        command = requests.search(request, default_k=tuning.default_k, max_k=tuning.max_k)
        hits = retrieval.search_memories(command, self._reads)
        return pb.SearchMemoriesResponse(results=[scored_to_pb(h) for h in hits])

    @grpc_method(DOMAIN)
    def ListReviewItems(
        self, request: pb.ListReviewItemsRequest, context: grpc.ServicerContext
    ) -> pb.ListReviewItemsResponse:
        authorize_tenant(request.tenant)
        tenant, state = requests.tenant_of(request.tenant), requests.review_state(request.state)
        filters = (tenant, request.user, state)
        page = page_request(request.page_size, request.page_token, default=50, maximum=500, filters=filters)
        found = review.list_review_items(tenant, request.user, state, page, self._ports)
        return pb.ListReviewItemsResponse(
            review_items=[review_item_to_pb(i) for i in found.items], next_page_token=found.next_page_token
        )

    @grpc_method(DOMAIN)
    def ResolveReviewItem(
        self, request: pb.ResolveReviewItemRequest, context: grpc.ServicerContext
    ) -> pb.ResolveReviewItemResponse:
        principal = authorize_tenant(request.tenant)
        command = requests.resolve(request, reviewer=principal.subject)
        return pb.ResolveReviewItemResponse(
            review_item=review_item_to_pb(review.resolve_review_item(command, self._ports))
        )

    @grpc_method(DOMAIN)
    def ListAuditEvents(
        self, request: pb.ListAuditEventsRequest, context: grpc.ServicerContext
    ) -> pb.ListAuditEventsResponse:
        authorize_tenant(request.tenant)
        tenant = requests.tenant_of(request.tenant)
        filters = (tenant, request.event_id, request.memory_id)
        page = page_request(request.page_size, request.page_token, default=100, maximum=1000, filters=filters)
        found = queries.list_audit_events(tenant, request.event_id, request.memory_id, page, self._ports)
        return pb.ListAuditEventsResponse(
            audit_events=[audit_event_to_pb(e) for e in found.items], next_page_token=found.next_page_token
        )
