"""The synchronous client: `Client(serving=..., memory=..., tenant=..., token=...)`.

Every method is one logical call: retried on UNAVAILABLE and DEADLINE_EXCEEDED with the same
request (and idempotency key) inside the policy's total deadline, failing with one of the
exceptions of `memloop_client.errors`. `AsyncClient` has the same surface with `await`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import grpc

from memloop_client._calls import Attempts, Calls
from memloop_client._gen.memloop.v1 import memory_service_pb2_grpc, serving_service_pb2_grpc
from memloop_client._transport import CHANNEL_OPTIONS, Call, TokenProvider, TokenSource, metadata
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
from memloop_client.tls import tls_credentials_from_env

Out = TypeVar("Out")


class Client:
    """A tenant's view of memloop: record what the agent did, read its context, forget, review.

    `token` is a bearer token or a callback returning a fresh one. `credentials` makes the
    channels TLS (`grpc.ssl_channel_credentials(...)`); without it they are plaintext, for a
    local stack.
    """

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
    def from_env(cls, **overrides: Any) -> Client:
        """Targets, tenant and token from MEMLOOP_SERVING_TARGET, MEMLOOP_MEMORY_TARGET,
        MEMLOOP_TENANT and MEMLOOP_TOKEN, TLS from MEMLOOP_TLS_CA_FILE (+ _CERT_FILE, _KEY_FILE);
        keyword arguments win."""
        settings = _env_settings()
        credentials = tls_credentials_from_env()
        if credentials is not None:
            settings["credentials"] = credentials
        return cls(**{**settings, **overrides})

    @property
    def tenant(self) -> str:
        return self._calls.tenant

    def record(
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
        """Commit what the agent did (serving's HandleRequest); learning follows in the background.

        The request id is generated unless given and is the same for every retry, so a call whose
        answer was lost returns the committed result with `replayed=True`, never a second result.
        Pass the `Context` you acted on (or its `procedure_versions`) so learning knows what you saw.
        """
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
        return self._run(call, timeout)

    def context(
        self,
        user: str,
        query: str,
        k: int = 5,
        *,
        types: Iterable[str] = (),
        procedure_scope: str = "",
        timeout: float | None = None,
    ) -> Context:
        """The top-k active memories for `query` with provenance, the procedures that apply, and the
        context version to pass back to `record`. `types` limits memories to e.g. ("preference",)."""
        return self._run(self._calls.context(user, query, k, types, procedure_scope), timeout)

    def forget(
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
        """Forget one memory, a whole user, or everything learned from one event (by its id or the
        request id `record` used). Name exactly one. The targets are unretrievable when it returns;
        the rest of the deletion follows (see `deletion`)."""
        call = self._calls.forget(
            memory_id=memory_id,
            user=user,
            event_id=event_id,
            source_request_id=source_request_id,
            reason=reason,
            request_id=request_id,
        )
        return self._run(call, timeout)

    def deletion(self, deletion_id: str, *, timeout: float | None = None) -> Deletion:
        """A deletion's progress, location by location."""
        return self._run(self._calls.deletion(deletion_id), timeout)

    def reviews(self, user: str = "", *, state: str = "pending", timeout: float | None = None) -> list[ReviewItem]:
        """Review items (every page), by default the pending ones; `user` '' means every user."""
        items: list[ReviewItem] = []
        token = ""
        while True:
            page, token = self._run(self._calls.reviews_page(user, state, token), timeout)
            items += page
            if not token:
                return items

    def close(self) -> None:
        for channel in self._channels:
            channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _run(self, call: Call[Out], timeout: float | None) -> Out:
        attempts = Attempts(self._policy, self._tokens, timeout)
        method = getattr(self._stubs[call.service], call.method)
        while True:
            attempt_timeout = attempts.next_timeout()
            try:
                response = method(
                    call.request, timeout=attempt_timeout, metadata=metadata(self._tokens, attempts.traceparent)
                )
            except grpc.RpcError as exc:
                error, retryable = attempts.failure(exc)
                wait = attempts.wait_after(error, retryable)
                if wait is None:
                    raise attempts.give_up(error, retryable) from None
                time.sleep(wait)
            else:
                return call.parse(response, attempts.count)


def _channel(target: str, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
    if credentials is None:
        return grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
    return grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS)


def _env_settings() -> dict[str, Any]:
    names = {
        "serving": "MEMLOOP_SERVING_TARGET",
        "memory": "MEMLOOP_MEMORY_TARGET",
        "tenant": "MEMLOOP_TENANT",
        "token": "MEMLOOP_TOKEN",
    }
    return {key: os.environ[name] for key, name in names.items() if os.environ.get(name)}
