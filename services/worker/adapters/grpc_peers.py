"""gRPC adapters of the worker's ports: serving (content), memory (conflicts, ledger) and policy.

Each call carries the service token and a deadline, and fails as the worker's two error kinds
(`peer_calls.py`: transient or permanent, text built from codes and field names only).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypeVar

import grpc

from services.common import convert
from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import (
    field_limits,
    memory_service_pb2,
    memory_service_pb2_grpc,
    policy_service_pb2,
    policy_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.vocabulary import Candidate, Decision
from services.worker.adapters.channels import PeerChannel
from services.worker.adapters.memory_messages import apply_request
from services.worker.adapters.peer_calls import call_peer, failure
from services.worker.service.model import (
    ApplyOutcome,
    ApplyRequest,
    ConflictRecord,
    EmailView,
    Evaluation,
    PermanentError,
    SenderVerdict,
    TransientError,
    WorkerError,
)

T = TypeVar("T")

# The batch RPCs' documented item limits (their proto comments, enforced at the peers' edge).
_BATCH_READ_MAX = field_limits.MAX_ITEMS["memloop.v1.BatchReadContentRequest.content_refs"]
_BATCH_EVALUATE_MAX = field_limits.MAX_ITEMS["memloop.v1.BatchEvaluateRequest.requests"]
_BATCH_LOOKUP_MAX = field_limits.MAX_ITEMS["memloop.v1.BatchGetProcessedEventsRequest.event_ids"]
_BATCH_APPLY_MAX = field_limits.MAX_ITEMS["memloop.v1.BatchApplyLearningRequest.requests"]
_BATCH_FIND_MAX = field_limits.MAX_ITEMS["memloop.v1.BatchFindConflictsRequest.requests"]


class GrpcContentReader:
    """ContentReader over serving's ReadContent."""

    def __init__(self, peer: PeerChannel, *, timeout: float) -> None:
        self._peer = peer
        self._timeout = timeout

    async def read(self, tenant: str, content_ref: str) -> EmailView:
        request = serving_service_pb2.ReadContentRequest(tenant=tenant, content_ref=content_ref)
        try:
            response = await call_peer(
                self._peer,
                "serving",
                lambda ch: serving_service_pb2_grpc.ServingServiceStub(ch).ReadContent(request, timeout=self._timeout),
            )
        except PermanentError as exc:
            # Serving's ErrorInfo says which: the tenant is unknown to serving, or its content is gone.
            if exc.reason == "SERVING_NOT_FOUND" and "reason=TENANT_NOT_FOUND" in exc.detail.split():
                raise PermanentError("TENANT_NOT_FOUND", exc.detail, dependency="serving") from None
            if exc.reason in ("SERVING_NOT_FOUND", "SERVING_PERMISSION_DENIED"):
                raise PermanentError("CONTENT_NOT_FOUND", exc.detail, dependency="serving") from None
            raise
        return _email(response)

    async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
        """One BatchReadContent per `_BATCH_READ_MAX` references; a missing blob is its item's
        PermanentError with the reason `read` would raise for it."""
        found: dict[str, EmailView | PermanentError] = {}
        for start in range(0, len(content_refs), _BATCH_READ_MAX):
            request = serving_service_pb2.BatchReadContentRequest(
                tenant=tenant, content_refs=content_refs[start : start + _BATCH_READ_MAX]
            )
            response = await self._batch_read(request)
            if len(response.results) != len(request.content_refs):
                raise TransientError("SERVING_BAD_RESPONSE", "results", dependency="serving")
            for ref, result in zip(request.content_refs, response.results, strict=True):
                if result.HasField("content"):
                    found[ref] = _email(result.content)
                else:
                    reason = result.error_reason if result.error_reason == "TENANT_NOT_FOUND" else "CONTENT_NOT_FOUND"
                    found[ref] = PermanentError(reason, f"status=NOT_FOUND reason={reason}", dependency="serving")
        return found

    async def _batch_read(
        self, request: serving_service_pb2.BatchReadContentRequest
    ) -> serving_service_pb2.BatchReadContentResponse:
        stub = serving_service_pb2_grpc.ServingServiceStub
        return await call_peer(
            self._peer, "serving", lambda ch: stub(ch).BatchReadContent(request, timeout=self._timeout)
        )


def _email(response: serving_service_pb2.ReadContentResponse) -> EmailView:
    content = response.content
    return EmailView(
        user=response.user,
        from_address=content.from_address,
        to_address=content.to_address,
        subject=content.subject,
        body=content.body,
        from_owner=response.from_owner,
    )


class GrpcConflictFinder:
    """ConflictFinder over memory's FindConflicts (one call for all candidates of an event) and
    BatchFindConflicts (one call for every user of a batch)."""

    def __init__(self, peer: PeerChannel, *, timeout: float) -> None:
        self._peer = peer
        self._timeout = timeout

    async def find(
        self, tenant: str, user: str, candidates: Sequence[Candidate]
    ) -> Mapping[str, Sequence[ConflictRecord]]:
        request = memory_service_pb2.FindConflictsRequest(
            tenant=tenant, user=user, candidates=[convert.candidate_to_pb(c) for c in candidates]
        )
        response = await call_peer(
            self._peer,
            "memory",
            lambda ch: memory_service_pb2_grpc.MemoryServiceStub(ch).FindConflicts(request, timeout=self._timeout),
        )
        return _conflicts(response)

    async def find_many(
        self, tenant: str, requests: Sequence[tuple[str, Sequence[Candidate]]]
    ) -> list[Mapping[str, Sequence[ConflictRecord]]]:
        """One BatchFindConflicts per `_BATCH_FIND_MAX` requests; one answer per request, in order."""
        found: list[Mapping[str, Sequence[ConflictRecord]]] = []
        for start in range(0, len(requests), _BATCH_FIND_MAX):
            chunk = requests[start : start + _BATCH_FIND_MAX]
            request = memory_service_pb2.BatchFindConflictsRequest(
                tenant=tenant,
                requests=[
                    memory_service_pb2.FindConflictsRequest(
                        user=user, candidates=[convert.candidate_to_pb(c) for c in candidates]
                    )
                    for user, candidates in chunk
                ],
            )
            response = await self._find_batch(request)
            if len(response.responses) != len(chunk):
                raise TransientError("MEMORY_BAD_RESPONSE", "responses", dependency="memory")
            found += [_conflicts(answer) for answer in response.responses]
        return found

    async def _find_batch(
        self, request: memory_service_pb2.BatchFindConflictsRequest
    ) -> memory_service_pb2.BatchFindConflictsResponse:
        return await call_peer(
            self._peer,
            "memory",
            lambda ch: memory_service_pb2_grpc.MemoryServiceStub(ch).BatchFindConflicts(request, timeout=self._timeout),
        )


def _conflicts(response: memory_service_pb2.FindConflictsResponse) -> dict[str, list[ConflictRecord]]:
    try:
        return {
            result.candidate_key: [
                ConflictRecord(
                    memory_id=memory.memory_id,
                    intent_key=memory.intent_key,
                    text=memory.text,
                    type=convert.memory_type_from_pb(memory.type, "conflicts.type"),
                )
                for memory in result.conflicts
            ]
            for result in response.results
        }
    except InvalidArgument as exc:
        raise TransientError("MEMORY_BAD_RESPONSE", exc.violations[0].field, dependency="memory") from None


class GrpcPolicyGate:
    """PolicyGate over the policy service's Evaluate."""

    def __init__(self, peer: PeerChannel, *, timeout: float) -> None:
        self._peer = peer
        self._timeout = timeout

    async def evaluate(
        self, candidate: Candidate, conflicts: Sequence[ConflictRecord], *, tenant: str, user: str, route: str
    ) -> Decision:
        request = _evaluate_request(Evaluation(candidate, tuple(conflicts), user=user, route=route), tenant)
        response = await call_peer(
            self._peer,
            "policy",
            lambda ch: policy_service_pb2_grpc.PolicyServiceStub(ch).Evaluate(request, timeout=self._timeout),
        )
        return _decision(response, candidate)

    async def evaluate_many(self, evaluations: Sequence[Evaluation], *, tenant: str) -> list[Decision]:
        """One BatchEvaluate per `_BATCH_EVALUATE_MAX` evaluations; every decision checked against its candidate."""
        decisions: list[Decision] = []
        for start in range(0, len(evaluations), _BATCH_EVALUATE_MAX):
            chunk = evaluations[start : start + _BATCH_EVALUATE_MAX]
            request = policy_service_pb2.BatchEvaluateRequest(
                tenant=tenant, requests=[_evaluate_request(e, tenant) for e in chunk]
            )
            response = await self._batch_evaluate(request)
            if len(response.responses) != len(chunk):
                raise TransientError("POLICY_BAD_RESPONSE", "responses", dependency="policy")
            decisions += [_decision(r, e.candidate) for r, e in zip(response.responses, chunk, strict=True)]
        return decisions

    async def _batch_evaluate(
        self, request: policy_service_pb2.BatchEvaluateRequest
    ) -> policy_service_pb2.BatchEvaluateResponse:
        stub = policy_service_pb2_grpc.PolicyServiceStub
        return await call_peer(self._peer, "policy", lambda ch: stub(ch).BatchEvaluate(request, timeout=self._timeout))


def _evaluate_request(evaluation: Evaluation, tenant: str) -> policy_service_pb2.EvaluateRequest:
    return policy_service_pb2.EvaluateRequest(
        candidate=convert.candidate_to_pb(evaluation.candidate),
        conflicts=[
            policy_service_pb2.ConflictingRecord(
                memory_id=c.memory_id,
                intent_key=c.intent_key,
                text=c.text,
                type=convert.memory_type_to_pb(c.type),
            )
            for c in evaluation.conflicts
        ],
        context=policy_service_pb2.EvaluationContext(tenant=tenant, user=evaluation.user, route=evaluation.route),
    )


def _decision(response: policy_service_pb2.EvaluateResponse, candidate: Candidate) -> Decision:
    try:
        decision = convert.decision_from_pb(response.decision)
    except InvalidArgument as exc:
        raise TransientError("POLICY_BAD_RESPONSE", exc.violations[0].field, dependency="policy") from None
    if decision.candidate.candidate_key != candidate.candidate_key:
        raise TransientError("POLICY_BAD_RESPONSE", "decision.candidate.candidate_key", dependency="policy")
    return decision


class GrpcMemoryApplier:
    """MemoryApplier over memory's GetProcessedEvent(s), ApplyLearning and BatchApplyLearning."""

    def __init__(self, peer: PeerChannel, *, timeout: float) -> None:
        self._peer = peer
        self._timeout = timeout

    async def already_processed(self, tenant: str, event_id: str) -> bool:
        request = memory_service_pb2.GetProcessedEventRequest(tenant=tenant, event_id=event_id)
        response = await call_peer(
            self._peer,
            "memory",
            lambda ch: memory_service_pb2_grpc.MemoryServiceStub(ch).GetProcessedEvent(request, timeout=self._timeout),
        )
        return response.processed

    async def processed_among(self, tenant: str, event_ids: Sequence[str]) -> set[str]:
        """One BatchGetProcessedEvents per `_BATCH_LOOKUP_MAX` ids."""
        processed: set[str] = set()
        for start in range(0, len(event_ids), _BATCH_LOOKUP_MAX):
            request = memory_service_pb2.BatchGetProcessedEventsRequest(
                tenant=tenant, event_ids=event_ids[start : start + _BATCH_LOOKUP_MAX]
            )
            response = await self._batch_lookup(request)
            if len(response.processed_events) != len(request.event_ids):
                raise TransientError("MEMORY_BAD_RESPONSE", "processed_events", dependency="memory")
            answers = zip(request.event_ids, response.processed_events, strict=True)
            processed |= {event_id for event_id, answer in answers if answer.processed}
        return processed

    async def _batch_lookup(
        self, request: memory_service_pb2.BatchGetProcessedEventsRequest
    ) -> memory_service_pb2.BatchGetProcessedEventsResponse:
        stub = memory_service_pb2_grpc.MemoryServiceStub
        return await call_peer(
            self._peer, "memory", lambda ch: stub(ch).BatchGetProcessedEvents(request, timeout=self._timeout)
        )

    async def apply(
        self,
        *,
        event_id: str,
        trace_id: str,
        tenant: str,
        user: str,
        decisions: Sequence[Decision],
        event_time: datetime | None = None,
        sender: SenderVerdict | None = None,
    ) -> ApplyOutcome:
        request = apply_request(
            tenant, ApplyRequest(event_id, trace_id, user, tuple(decisions), event_time=event_time, sender=sender)
        )
        response = await call_peer(
            self._peer,
            "memory",
            lambda ch: memory_service_pb2_grpc.MemoryServiceStub(ch).ApplyLearning(request, timeout=self._timeout),
        )
        return ApplyOutcome(
            event_id=response.event_id or event_id,
            already_processed=response.already_processed,
            applied_count=len(response.applied),
        )

    async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
        """One BatchApplyLearning per `_BATCH_APPLY_MAX` events; each item's refusal becomes its own
        TransientError or PermanentError, classified by its code as a failed call would be."""
        results: list[ApplyOutcome | WorkerError] = []
        for start in range(0, len(requests), _BATCH_APPLY_MAX):
            chunk = requests[start : start + _BATCH_APPLY_MAX]
            request = memory_service_pb2.BatchApplyLearningRequest(
                tenant=tenant, requests=[apply_request(tenant, item) for item in chunk]
            )
            response = await self._batch_apply(request)
            if len(response.results) != len(chunk):
                raise TransientError("MEMORY_BAD_RESPONSE", "results", dependency="memory")
            results.extend(_item_result(item, result) for item, result in zip(chunk, response.results, strict=True))
        return results

    async def _batch_apply(
        self, request: memory_service_pb2.BatchApplyLearningRequest
    ) -> memory_service_pb2.BatchApplyLearningResponse:
        stub = memory_service_pb2_grpc.MemoryServiceStub
        return await call_peer(
            self._peer, "memory", lambda ch: stub(ch).BatchApplyLearning(request, timeout=self._timeout)
        )


_STATUS_BY_CODE = {code.value[0]: code for code in grpc.StatusCode}


def _item_result(item: ApplyRequest, result: memory_service_pb2.ApplyLearningResult) -> ApplyOutcome | WorkerError:
    """An item memory refused is classified exactly as the same refusal of a whole call would be."""
    if result.HasField("error"):
        code = _STATUS_BY_CODE.get(result.error.code, grpc.StatusCode.UNKNOWN)
        return failure(code, result.error.reason, result.error.fields, dependency="memory")
    outcome = result.outcome
    return ApplyOutcome(
        event_id=outcome.event_id or item.event_id,
        already_processed=outcome.already_processed,
        applied_count=len(outcome.applied),
    )


async def close_peers(peers: Sequence[PeerChannel]) -> None:
    """Close every peer channel, ignoring the ones already closed."""
    await asyncio.gather(*(peer.close() for peer in peers), return_exceptions=True)
