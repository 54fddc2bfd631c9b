"""The client's retry, error, token and trace behaviour, against a scripted in-process server.

The server here is a stand-in that fails on cue, so each rule can be shown in isolation; the
e2e tests (tests/e2e/test_client_*.py) run the same client against the real stack.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from memloop_client import (
    CONTRACT_VERSION,
    AsyncClient,
    Client,
    Email,
    InvalidArgument,
    NotFound,
    RetryPolicy,
    Unavailable,
    trace_context,
)
from memloop_client._gen.google.rpc import error_details_pb2, status_pb2
from memloop_client._gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from memloop_client._transport import TokenSource

FAST = RetryPolicy(total_deadline=5.0, attempt_timeout=2.0, initial_backoff=0.01, max_backoff=0.05)


@dataclass
class Script:
    """What the stand-in serving answers, attempt by attempt, and what it saw."""

    failures: list[tuple[grpc.StatusCode, str]] = field(default_factory=list)
    seen: list[dict[str, str]] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    committed: set[str] = field(default_factory=set)


def _status(code: grpc.StatusCode, reason: str, fields: tuple[str, ...] = ()) -> status_pb2.Status:
    status = status_pb2.Status(code=code.value[0], message=f"{reason} happened")
    info = error_details_pb2.ErrorInfo(reason=reason, domain="serving.memloop")
    status.details.add(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=info.SerializeToString())
    if fields:
        bad = error_details_pb2.BadRequest(
            field_violations=[error_details_pb2.BadRequest.FieldViolation(field=f, description="bad") for f in fields]
        )
        status.details.add(type_url="type.googleapis.com/google.rpc.BadRequest", value=bad.SerializeToString())
    return status


class _Serving(serving_service_pb2_grpc.ServingServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script

    def HandleRequest(self, request: Any, context: grpc.ServicerContext) -> Any:
        metadata = context.invocation_metadata()  # text headers only: the client sends no -bin ones
        self.script.seen.append({key: value for key, value in metadata if isinstance(value, str)})
        self.script.request_ids.append(request.request_id)
        if self.script.failures:
            code, reason = self.script.failures.pop(0)
            if reason == "COMMIT_THEN_LOSE":  # the commit happens, the answer is lost
                self.script.committed.add(request.request_id)
                code, reason = grpc.StatusCode.UNAVAILABLE, "CONNECTION_LOST"
            fields = ("thread",) if code == grpc.StatusCode.INVALID_ARGUMENT else ()
            status = _status(code, reason, fields)
            context.abort_with_status(
                _RpcStatus(code, status.message, (("grpc-status-details-bin", status.SerializeToString()),))
            )
        replayed = request.request_id in self.script.committed
        self.script.committed.add(request.request_id)
        return serving_service_pb2.HandleRequestResponse(
            result_id="res-1", event_id="evt-1", trace_id="t", reply=request.reply, replayed=replayed
        )


@dataclass(frozen=True)
class _RpcStatus(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, bytes], ...]


@pytest.fixture
def serving() -> Iterator[tuple[str, Script]]:
    script = Script()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    serving_service_pb2_grpc.add_ServingServiceServicer_to_server(
        _Serving(script),  # type: ignore[abstract]  # the generated base answers UNIMPLEMENTED for the rest
        server,
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", script
    server.stop(None)


def _client(target: str, policy: RetryPolicy = FAST) -> Client:
    return Client(serving=target, memory=target, tenant="acme", token="tok", retry=policy)


def _record(client: Client) -> Any:
    return client.record("alice", thread="t1", route="r", reply="ok", email=Email("a@x", "b@x"))


def test_unavailable_is_retried_with_the_same_request_id_and_trace(serving: tuple[str, Script]) -> None:
    # Given a serving that is unavailable twice, then answers
    target, script = serving
    script.failures = [(grpc.StatusCode.UNAVAILABLE, "DOWN"), (grpc.StatusCode.DEADLINE_EXCEEDED, "SLOW")]
    # When the agent records once
    with _client(target) as client:
        result = _record(client)
    # Then three attempts carried one request id and one trace, and one result came back
    assert result.attempts == 3 and not result.replayed
    assert len(set(script.request_ids)) == 1 and result.request_id == script.request_ids[0]
    traces = {m["traceparent"][3:35] for m in script.seen}
    assert len(traces) == 1
    assert all(m["x-memloop-contract"] == CONTRACT_VERSION and m["authorization"] == "Bearer tok" for m in script.seen)


def test_a_lost_answer_comes_back_as_the_committed_result_marked_replayed(serving: tuple[str, Script]) -> None:
    # Given a serving that commits the first attempt but whose answer is lost
    target, script = serving
    script.failures = [(grpc.StatusCode.UNAVAILABLE, "COMMIT_THEN_LOSE")]
    with _client(target) as client:
        result = _record(client)
    # Then the retry returns the first commit, saying so
    assert result.replayed and result.attempts == 2


def test_bad_input_is_not_retried_and_names_the_field(serving: tuple[str, Script]) -> None:
    target, script = serving
    script.failures = [(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")]
    with (
        _client(target) as client,
        pytest.raises(InvalidArgument) as raised,
    ):
        _record(client)
    assert raised.value.field == "thread" and raised.value.reason == "INVALID_ARGUMENT"
    assert raised.value.code == "INVALID_ARGUMENT" and len(script.request_ids) == 1


def test_other_codes_map_to_their_exception_with_the_reason(serving: tuple[str, Script]) -> None:
    target, script = serving
    script.failures = [(grpc.StatusCode.NOT_FOUND, "CONTENT_GONE")]
    with (
        _client(target) as client,
        pytest.raises(NotFound) as raised,
    ):
        _record(client)
    assert raised.value.reason == "CONTENT_GONE" and raised.value.domain == "serving.memloop"


def test_retries_stop_at_the_total_deadline(serving: tuple[str, Script]) -> None:
    # Given a serving that never recovers
    target, script = serving
    script.failures = [(grpc.StatusCode.UNAVAILABLE, "DOWN")] * 1000
    policy = RetryPolicy(total_deadline=0.5, attempt_timeout=0.2, initial_backoff=0.02, max_backoff=0.1)
    started = time.monotonic()
    with (
        _client(target, policy) as client,
        pytest.raises(Unavailable) as raised,
    ):
        _record(client)
    # Then the call gives up at its deadline, not after the 1000 scripted failures (~100 s of backoff),
    # after several attempts with the same id; the bound is 10x the deadline so a loaded machine passes
    assert time.monotonic() - started < 5.0
    assert raised.value.attempts >= 3 and len(set(script.request_ids)) == 1


def _jwt(exp: float) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'exp': exp, 'sub': 'agent'})}.sig"


def test_an_expired_token_is_refreshed_by_the_callback_and_the_call_retried(serving: tuple[str, Script]) -> None:
    # Given a token callback and a serving that says the first token expired
    target, script = serving
    issued = iter(["tok-1", "tok-2"])
    script.failures = [(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")]
    with Client(serving=target, memory=target, tenant="acme", token=lambda: next(issued), retry=FAST) as client:
        result = _record(client)
    # Then the second attempt carried the fresh token
    assert result.attempts == 2
    assert [m["authorization"] for m in script.seen] == ["Bearer tok-1", "Bearer tok-2"]


def test_a_token_close_to_its_expiry_is_replaced_before_use() -> None:
    tokens = iter([_jwt(time.time() + 5), _jwt(time.time() + 3600)])
    source = TokenSource(lambda: next(tokens), refresh_margin=30)
    first = source.current()
    assert source.current() != first  # the first expires within the margin
    assert TokenSource("static").current() == "static"


def test_an_explicit_trace_context_is_joined(serving: tuple[str, Script]) -> None:
    target, script = serving
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with _client(target) as client, trace_context(parent):
        _record(client)
    assert script.seen[0]["traceparent"].startswith("00-0af7651916cd43dd8448eb211c80319c-")


def test_the_async_client_retries_the_same_way(serving: tuple[str, Script]) -> None:
    target, script = serving
    script.failures = [(grpc.StatusCode.UNAVAILABLE, "COMMIT_THEN_LOSE")]

    async def run() -> Any:
        async with AsyncClient(serving=target, memory=target, tenant="acme", token="tok", retry=FAST) as client:
            return await client.record("alice", thread="t1", route="r", reply="ok", email=Email("a@x", "b@x"))

    result = asyncio.run(run())
    assert result.replayed and result.attempts == 2 and len(set(script.request_ids)) == 1


def test_bad_arguments_are_refused_before_any_call() -> None:
    with Client(serving="127.0.0.1:1", memory="127.0.0.1:1", tenant="acme", token="tok", retry=FAST) as client:
        with pytest.raises(InvalidArgument) as raised:
            client.context("alice", "q", types=["nonsense"])
        assert raised.value.field == "types"
        with pytest.raises(InvalidArgument) as raised:
            client.forget(memory_id="m", user="alice")
        assert raised.value.field == "target"


def test_backoff_grows_with_jitter_up_to_its_cap() -> None:
    import random

    policy = RetryPolicy(initial_backoff=0.1, max_backoff=0.8, multiplier=2.0, jitter=0.5)
    delays = policy.delays(random.Random(7))
    waits = [next(delays) for _ in range(8)]
    ceilings = [0.1, 0.2, 0.4, 0.8, 0.8, 0.8, 0.8, 0.8]
    assert all(c / 2 <= w <= c for w, c in zip(waits, ceilings, strict=True))
    assert len(set(waits)) == len(waits)  # jittered, not a fixed schedule
