"""Each public operation as a `Call`, and the attempt bookkeeping both clients share.

Keeping these here means the sync and asyncio clients cannot drift: they build the same requests,
read the same results and make the same retry decisions; only their waiting differs.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memloop_client import _convert
from memloop_client._gen.memloop.v1 import memory_service_pb2
from memloop_client._transport import Call, TokenSource, current_traceparent
from memloop_client.errors import RETRYABLE, MemloopError, Unauthenticated, Unavailable, from_status
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

REVIEW_PAGE_SIZE = 500


def new_request_id() -> str:
    """A fresh idempotency key, chosen once per call and reused by every retry of it."""
    return f"req-{uuid.uuid4().hex}"


class Calls:
    """The operations of one tenant, as calls to make."""

    def __init__(self, tenant: str) -> None:
        if not tenant:
            raise ValueError("tenant is required")
        self.tenant = tenant

    def record(
        self,
        user: str,
        *,
        thread: str,
        route: str,
        reply: str,
        email: Email | None,
        procedure_versions: Mapping[str, str] | Context | None,
        tool_outcomes: Sequence[ToolOutcome],
        feedback_ref: str,
        owner_address: str,
        request_id: str | None,
    ) -> Call[RecordResult]:
        rid = request_id or new_request_id()
        request = _convert.handle_request(
            request_id=rid,
            tenant=self.tenant,
            user=user,
            thread=thread,
            route=route,
            reply=reply,
            email=email,
            procedure_versions=procedure_versions,
            tool_outcomes=tool_outcomes,
            feedback_ref=feedback_ref,
            owner_address=owner_address,
        )
        return Call("serving", "HandleRequest", request, lambda r, n: _convert.record_result(rid, r, n))

    def context(self, user: str, query: str, k: int, types: Iterable[str], procedure_scope: str) -> Call[Context]:
        request = memory_service_pb2.GetContextRequest(
            tenant=self.tenant,
            user=user,
            query=query,
            k=k,
            types=_convert.memory_types(types),
            procedure_scope=procedure_scope,
        )
        return Call("memory", "GetContext", request, lambda r, _n: _convert.context(r))

    def forget(
        self, *, memory_id: str, user: str, event_id: str, source_request_id: str, reason: str, request_id: str | None
    ) -> Call[Forgotten]:
        request = _convert.forget_request(
            tenant=self.tenant,
            memory_id=memory_id,
            user=user,
            event_id=event_id,
            source_request_id=source_request_id,
            reason=reason,
            request_id=request_id or new_request_id(),
        )
        return Call("memory", "Forget", request, lambda r, _n: _convert.forgotten(r))

    def deletion(self, deletion_id: str) -> Call[Deletion]:
        request = memory_service_pb2.GetDeletionRequest(tenant=self.tenant, deletion_id=deletion_id)
        return Call("memory", "GetDeletion", request, lambda r, _n: _convert.deletion(r))

    def reviews_page(self, user: str, state: str, page_token: str) -> Call[tuple[list[ReviewItem], str]]:
        request = memory_service_pb2.ListReviewItemsRequest(
            tenant=self.tenant,
            user=user,
            state=_convert.review_state(state),  # type: ignore[arg-type]
            page_size=REVIEW_PAGE_SIZE,
            page_token=page_token,
        )
        return Call(
            "memory",
            "ListReviewItems",
            request,
            lambda r, _n: ([_convert.review_item(i) for i in r.review_items], r.next_page_token),
        )


class Attempts:
    """The attempts of one call: per-attempt timeouts within the total deadline, the wait before
    the next attempt, one token refresh on TOKEN_EXPIRED, and the trace all attempts share."""

    def __init__(self, policy: RetryPolicy, tokens: TokenSource, timeout: float | None) -> None:
        self._policy = policy
        self._tokens = tokens
        self._started = time.monotonic()
        self._deadline = self._started + (timeout if timeout is not None else policy.total_deadline)
        self._delays = policy.delays()
        self._refreshed = False
        self.count = 0
        self.traceparent = current_traceparent()

    def next_timeout(self) -> float:
        """Count an attempt and give it what is left of the deadline, at most the attempt timeout."""
        self.count += 1
        return max(0.001, min(self._policy.attempt_timeout, self._deadline - time.monotonic()))

    def wait_after(self, error: MemloopError, retryable: bool) -> float | None:
        """Seconds to wait before the next attempt, or None when the call must fail with `error`."""
        if (
            isinstance(error, Unauthenticated)
            and error.reason == "TOKEN_EXPIRED"
            and self._tokens.refreshable
            and not self._refreshed
        ):
            self._tokens.refresh()
            self._refreshed = True
            return 0.0
        if not retryable or (self._policy.max_attempts and self.count >= self._policy.max_attempts):
            return None
        delay = next(self._delays)
        if time.monotonic() + delay >= self._deadline:
            return None
        return delay

    def failure(self, exc: Any) -> tuple[MemloopError, bool]:
        """The mapped error of a failed attempt (an RpcError of either API) and whether it is retryable."""
        code = exc.code()
        trailing = tuple(exc.trailing_metadata() or ())
        error = from_status(code, exc.details() or "", trailing, attempts=self.count)
        return error, code in RETRYABLE

    def give_up(self, error: MemloopError, retryable: bool) -> MemloopError:
        if not retryable:
            return error
        elapsed = time.monotonic() - self._started
        return Unavailable(
            f"gave up after {self.count} attempt(s) in {elapsed:.1f} s: {error.message}",
            code=error.code,
            reason=error.reason,
            domain=error.domain,
            attempts=self.count,
        )


__all__ = ["Attempts", "Call", "Calls", "new_request_id"]
