"""The real `Services`: gRPC stubs of memory and serving, the person's token on every call.

Channels are shared (one per target, created lazily inside the event loop that uses them) and
carry no credential; the bearer token travels as per-call metadata, so one console process serves
many people without ever mixing their identities. A refusal comes back as `ServiceError` with the
canonical code and the `ErrorInfo` reason (for example NEVER_SUPPRESS), which the pages show as is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from services.cli.trace import collect_timeline, format_timeline
from services.common.auth import bearer_metadata
from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as lp_grpc
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as mem_grpc
from services.common.grpc_client import channel_options
from services.common.tls import TlsFiles, channel_credentials
from services.console.ports import PersonServices, ServiceError

T = TypeVar("T")
_MAX_PAGES = 20  # a console page shows at most 20 pages of 500; beyond that it says so instead


def _service_error(error: grpc.aio.AioRpcError) -> ServiceError:
    reason = ""
    trailing: Any = error.trailing_metadata() or ()
    for key, value in trailing:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    reason = info.reason
    return ServiceError(error.code().name, error.details() or "", reason)


class GrpcServices:
    """Shared channels to memory and serving; `for_token` binds a person's token to them."""

    def __init__(
        self, memory_target: str, serving_target: str, span_file: str, timeout: float, tls: TlsFiles | None = None
    ) -> None:
        self._tls = tls
        self._memory_target = memory_target
        self._serving_target = serving_target
        self._span_file = Path(span_file) if span_file else None
        self._timeout = timeout
        self._channel: grpc.aio.Channel | None = None

    def _memory_channel(self) -> grpc.aio.Channel:
        if self._channel is None:
            interceptors: list[Any] = list(aio_client_interceptors())  # type: ignore[no-untyped-call]
            # the clustered stack's memory target lists its replicas: round_robin, one TLS name
            options = channel_options(self._memory_target)
            target = self._memory_target
            if self._tls is None:
                self._channel = grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
            else:
                credentials = channel_credentials(self._tls)
                self._channel = grpc.aio.secure_channel(target, credentials, options=options, interceptors=interceptors)
        return self._channel

    def for_token(self, token: str) -> PersonServices:
        channel = self._memory_channel()
        return _PersonClient(
            mem_grpc.MemoryServiceStub(channel),
            lp_grpc.LearnedProcedureServiceStub(channel),
            token,
            self._timeout,
            self,
        )

    def trace_lines(self, token: str, tenant: str, event_id: str) -> list[str]:
        entries = collect_timeline(
            self._serving_target, self._memory_target, token, tenant, event_id, self._span_file, self._tls
        )
        return format_timeline(entries)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close(None)


class _PersonClient:
    def __init__(self, memory: Any, procedures: Any, token: str, timeout: float, owner: GrpcServices) -> None:
        self._timeout = timeout
        self._memory = memory
        self._procedures = procedures
        self._metadata = bearer_metadata(token)
        self._token = token
        self._owner = owner

    async def _call(self, method: Callable[..., Awaitable[T]], request: Any) -> T:
        try:
            return await method(request, metadata=self._metadata, timeout=self._timeout)
        except grpc.aio.AioRpcError as error:
            raise _service_error(error) from error

    async def _pages(self, method: Callable[..., Awaitable[Any]], request: Any, field: str) -> list[Any]:
        items: list[Any] = []
        for _ in range(_MAX_PAGES):
            page = await self._call(method, request)
            items.extend(getattr(page, field))
            if not page.next_page_token:
                break
            request.page_token = page.next_page_token
        return items

    async def review_items(self, tenant: str, state: int) -> list[mem.ReviewItem]:
        request = mem.ListReviewItemsRequest(tenant=tenant, state=cast(Any, state), page_size=500)
        return await self._pages(self._memory.ListReviewItems, request, "review_items")

    async def find_conflicts(self, tenant: str, user: str, candidate: candidate_pb2.Candidate) -> list[mem.Memory]:
        """The active memory an approval would supersede: the user's active record of the same intent.

        Read with ListMemories, which a reviewer may call; FindConflicts is a hop of the learning path
        that only the loop's service identity may call (services/common/access.py).
        """
        if not candidate.intent_key:
            return []
        request = mem.ListMemoriesRequest(
            tenant=tenant, user=user, states=[mem.MEMORY_STATE_ACTIVE], intent_key=candidate.intent_key, page_size=10
        )
        found: mem.ListMemoriesResponse = await self._call(self._memory.ListMemories, request)
        return list(found.memories)

    async def resolve_review(self, tenant: str, review_item_id: str, approve: bool, reason: str) -> mem.ReviewItem:
        resolution = mem.REVIEW_RESOLUTION_APPROVE if approve else mem.REVIEW_RESOLUTION_DENY
        request = mem.ResolveReviewItemRequest(
            tenant=tenant, review_item_id=review_item_id, resolution=resolution, reason=reason
        )
        resolved: mem.ResolveReviewItemResponse = await self._call(self._memory.ResolveReviewItem, request)
        return resolved.review_item

    async def memories(self, tenant: str, user: str, states: Sequence[int]) -> list[mem.Memory]:
        request = mem.ListMemoriesRequest(tenant=tenant, user=user, states=cast(Any, list(states)), page_size=500)
        return await self._pages(self._memory.ListMemories, request, "memories")

    async def search(self, tenant: str, user: str, query: str) -> list[mem.ScoredMemory]:
        request = mem.SearchMemoriesRequest(tenant=tenant, user=user, query=query, k=20)
        return list((await self._call(self._memory.SearchMemories, request)).results)

    async def memory(self, tenant: str, memory_id: str) -> mem.Memory:
        request = mem.GetMemoryRequest(tenant=tenant, memory_id=memory_id)
        found: mem.GetMemoryResponse = await self._call(self._memory.GetMemory, request)
        return found.memory

    async def lineage(self, tenant: str, memory_id: str) -> list[mem.Memory]:
        request = mem.GetLineageRequest(tenant=tenant, memory_id=memory_id)
        found: mem.GetLineageResponse = await self._call(self._memory.GetLineage, request)
        return list(found.chain)

    async def audit(self, tenant: str, *, memory_id: str = "", event_id: str = "") -> list[mem.AuditEvent]:
        request = mem.ListAuditEventsRequest(tenant=tenant, memory_id=memory_id, event_id=event_id, page_size=1000)
        return await self._pages(self._memory.ListAuditEvents, request, "audit_events")

    async def forget(self, request: mem.ForgetRequest) -> mem.ForgetResponse:
        return await self._call(self._memory.Forget, request)

    async def deletion(self, tenant: str, deletion_id: str) -> mem.Deletion:
        request = mem.GetDeletionRequest(tenant=tenant, deletion_id=deletion_id)
        found: mem.GetDeletionResponse = await self._call(self._memory.GetDeletion, request)
        return found.deletion

    async def procedures(self, tenant: str, kind: int, status: int) -> list[lp.LearnedProcedure]:
        request = lp.ListLearnedProceduresRequest(
            tenant=tenant, kind=cast(Any, kind), state=cast(Any, status), page_size=500
        )
        return await self._pages(self._procedures.ListLearnedProcedures, request, "learned_procedures")

    async def procedure(self, tenant: str, procedure_id: str) -> lp.GetLearnedProcedureResponse:
        request = lp.GetLearnedProcedureRequest(tenant=tenant, procedure_id=procedure_id)
        return await self._call(self._procedures.GetLearnedProcedure, request)

    async def save_procedure(self, request: lp.SaveLearnedProcedureRequest) -> lp.SaveLearnedProcedureResponse:
        return await self._call(self._procedures.SaveLearnedProcedure, request)

    async def deprecate_procedure(self, tenant: str, procedure_id: str, reason: str) -> lp.LearnedProcedure:
        request = lp.DeprecateLearnedProcedureRequest(tenant=tenant, procedure_id=procedure_id, reason=reason)
        found: lp.DeprecateLearnedProcedureResponse = await self._call(
            self._procedures.DeprecateLearnedProcedure, request
        )
        return found.learned_procedure

    async def backfill(
        self, tenant: str, rules: Sequence[lp.LegacyRule], validate_only: bool
    ) -> lp.BackfillLearnedProceduresResponse:
        request = lp.BackfillLearnedProceduresRequest(tenant=tenant, rules=list(rules), validate_only=validate_only)
        return await self._call(self._procedures.BackfillLearnedProcedures, request)

    async def trace(self, tenant: str, event_id: str) -> list[str]:
        """The `memloop trace` timeline, computed by the CLI's own function in a worker thread."""
        try:
            return await asyncio.to_thread(self._owner.trace_lines, self._token, tenant, event_id)
        except grpc.RpcError as error:
            code = error.code().name if hasattr(error, "code") else "UNKNOWN"
            details = error.details() if hasattr(error, "details") else str(error)
            raise ServiceError(code, details or "") from error
