"""The asyncio client: the same surface as `Client`, every method awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc
import grpc.aio

from memloop_client._calls import Attempts, Calls
from memloop_client._gen.memloop.v1 import memory_service_pb2_grpc, serving_service_pb2_grpc
from memloop_client._transport import CHANNEL_OPTIONS, Call, TokenProvider, TokenSource, metadata
from memloop_client.client import _env_settings
from memloop_client.results import (
    Context,
    Deletion,
    Email,
    Forgotten,
    RecordResult,
    ReviewItem,
    ToolOutcome,
)
from memloop_client.retry import RetryPolicy

Out = TypeVar("Out")


class AsyncClient:
    """`Client` for asyncio code; create it inside the running event loop."""

    def __init__(
        self,
        *,
        serving: str,
        memory: str,
        tenant: str,
        token: str | TokenProvider,
        retry: RetryPolicy | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self._calls = Calls(tenant)
        self._tokens = TokenSource(token)
        self._policy = retry or RetryPolicy()
        self._channels = [_channel(serving, credentials), _channel(memory, credentials)]
        self._stubs: dict[str, Any] = {
            "serving": serving_service_pb2_grpc.ServingServiceStub(self._channels[0]),
            "memory": memory_service_pb2_grpc.MemoryServiceStub(self._channels[1]),
        }

    @classmethod
    def from_env(cls, **overrides: Any) -> AsyncClient:
        """As `Client.from_env`."""
        return cls(**{**_env_settings(), **overrides})

    @property
    def tenant(self) -> str:
        return self._calls.tenant

    async def record(
        self,
        user: str,
        *,
        thread: str,
        route: str,
        reply: str,
        email: Email | None = None,
        procedure_versions: Mapping[str, str] | Context | None = None,
        tool_outcomes: Sequence[ToolOutcome] = (),
        feedback_ref: str = "",
        owner_address: str = "",
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> RecordResult:
        """As `Client.record`."""
        call = self._calls.record(
            user,
            thread=thread,
            route=route,
            reply=reply,
            email=email,
            procedure_versions=procedure_versions,
            tool_outcomes=tool_outcomes,
            feedback_ref=feedback_ref,
            owner_address=owner_address,
            request_id=request_id,
        )
        return await self._run(call, timeout)

    async def context(
        self,
        user: str,
        query: str,
        k: int = 5,
        *,
        types: Iterable[str] = (),
        procedure_scope: str = "",
        timeout: float | None = None,
    ) -> Context:
        """As `Client.context`."""
        return await self._run(self._calls.context(user, query, k, types, procedure_scope), timeout)

    async def forget(
        self,
        *,
        memory_id: str = "",
        user: str = "",
        event_id: str = "",
        source_request_id: str = "",
        reason: str = "",
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> Forgotten:
        """As `Client.forget`."""
        call = self._calls.forget(
            memory_id=memory_id,
            user=user,
            event_id=event_id,
            source_request_id=source_request_id,
            reason=reason,
            request_id=request_id,
        )
        return await self._run(call, timeout)

    async def deletion(self, deletion_id: str, *, timeout: float | None = None) -> Deletion:
        """As `Client.deletion`."""
        return await self._run(self._calls.deletion(deletion_id), timeout)

    async def reviews(
        self, user: str = "", *, state: str = "pending", timeout: float | None = None
    ) -> list[ReviewItem]:
        """As `Client.reviews`."""
        items: list[ReviewItem] = []
        token = ""
        while True:
            page, token = await self._run(self._calls.reviews_page(user, state, token), timeout)
            items += page
            if not token:
                return items

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _run(self, call: Call[Out], timeout: float | None) -> Out:
        attempts = Attempts(self._policy, self._tokens, timeout)
        method = getattr(self._stubs[call.service], call.method)
        while True:
            attempt_timeout = attempts.next_timeout()
            try:
                response = await method(
                    call.request, timeout=attempt_timeout, metadata=metadata(self._tokens, attempts.traceparent)
                )
            except grpc.aio.AioRpcError as exc:
                error, retryable = attempts.failure(exc)
                wait = attempts.wait_after(error, retryable)
                if wait is None:
                    raise attempts.give_up(error, retryable) from None
                await asyncio.sleep(wait)
            else:
                return call.parse(response, attempts.count)


def _channel(target: str, credentials: grpc.ChannelCredentials | None) -> grpc.aio.Channel:
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
    return grpc.aio.secure_channel(target, credentials, options=CHANNEL_OPTIONS)
