"""Serving, as the deletion workflow reaches it: one gRPC client with the loop's service token.

Transport failures become `Unavailable` (the step is retried later); NOT_FOUND and
INVALID_ARGUMENT about an event id mean serving knows no such request, which is an answer, not
a failure.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import grpc

from services.common.errors import Unavailable
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from services.common.gen.memloop.v1 import serving_service_pb2_grpc as spb_grpc
from services.common.grpc_client import sync_channel
from services.common.tls import TlsFiles
from services.memory.deletion.service.ports import EventItem, OutboxEventRef

_UNKNOWN = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)


class GrpcServingContent:
    """Thread-safe: one channel, opened on first use, shared by the workflow's threads."""

    def __init__(self, target: str, token: str, *, timeout_seconds: float = 10.0, tls: TlsFiles | None = None) -> None:
        self._target = target
        self._tls = tls
        self._token = token
        self._timeout = timeout_seconds
        self._lock = threading.Lock()
        self._stub: spb_grpc.ServingServiceStub | None = None
        self._channel: grpc.Channel | None = None

    def event_of_request(self, tenant: str, request_id: str) -> OutboxEventRef | None:
        request = spb.GetOutboxEventRequest(tenant=tenant, request_id=request_id)
        try:
            found = self._serving().GetOutboxEvent(request, timeout=self._timeout)
        except grpc.RpcError as exc:
            if exc.code() in _UNKNOWN:
                return None
            raise _unavailable(exc) from None
        return OutboxEventRef(found.event.event_id, found.event.user, found.event.content_ref)

    def delete_content(self, tenant: str, *, event_id: str, content_ref: str, deletion_id: str) -> bool:
        # The blob oneof holds one key: the reference when known, else the event that carried it.
        request = spb.DeleteContentRequest(tenant=tenant, deletion_id=deletion_id)
        if content_ref:
            request.content_ref = content_ref
        else:
            request.event_id = event_id
        try:
            return bool(self._serving().DeleteContent(request, timeout=self._timeout).deleted)
        except grpc.RpcError as exc:
            raise _unavailable(exc) from None

    def delete_contents(self, tenant: str, events: Sequence[EventItem], deletion_id: str) -> None:
        request = spb.DeleteContentsRequest(
            tenant=tenant,
            deletion_id=deletion_id,
            content_refs=[e.content_ref for e in events if e.content_ref],
            event_ids=[e.event_id for e in events if not e.content_ref],
        )
        try:
            self._serving().DeleteContents(request, timeout=self._timeout)
        except grpc.RpcError as exc:
            raise _unavailable(exc) from None

    def close(self) -> None:
        with self._lock:
            if self._channel is not None:
                self._channel.close()
            self._channel, self._stub = None, None

    def _serving(self) -> spb_grpc.ServingServiceStub:
        if not self._target or not self._token:
            raise Unavailable("serving is not configured (MEMLOOP_SERVING_TARGET, MEMLOOP_SERVICE_TOKEN)")
        with self._lock:
            if self._stub is None:
                self._channel = sync_channel(self._target, self._token, self._tls)
                self._stub = spb_grpc.ServingServiceStub(self._channel)
            return self._stub


def _unavailable(exc: grpc.RpcError) -> Unavailable:
    return Unavailable(f"serving answered {exc.code().name}")
