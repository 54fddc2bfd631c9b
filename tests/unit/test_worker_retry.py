"""Retry classification, parsing of wire events, and translation of peer failures — all pure."""

from __future__ import annotations

import grpc
import pytest

from services.common.gen.memloop.v1 import learning_event_pb2
from services.worker.adapters.peer_calls import translate_rpc_error
from services.worker.entrypoints.messages import parse_learning_event
from services.worker.service.model import PermanentError, TransientError
from services.worker.service.retry import RETRIES_EXHAUSTED, DeadLetter, Retry, RetryPolicy, as_worker_error, on_failure

POLICY = RetryPolicy(max_deliver=5, min_dead_letter_age=60.0, backoff_initial=1.0, backoff_max=20.0)
DOWN = TransientError("MEMORY_UNAVAILABLE", "status=UNAVAILABLE", dependency="memory")


@pytest.mark.parametrize(
    ("attempts", "elapsed"),
    [(1, 0.0), (4, 3600.0), (5, 59.9), (50, 10.0)],
    ids=["first-attempt", "old-but-few-attempts", "many-attempts-but-young", "short-outage-many-redeliveries"],
)
def test_transient_failures_are_retried_until_both_attempts_and_age_are_spent(attempts: int, elapsed: float) -> None:
    # Given a transient failure short of the budget on at least one axis
    # When it is classified
    action = on_failure(DOWN, attempts=attempts, elapsed=elapsed, policy=POLICY)

    # Then it is retried after a positive delay
    assert isinstance(action, Retry)
    assert 0 < action.delay <= POLICY.backoff_max


def test_a_transient_failure_past_both_budgets_is_dead_lettered_as_retries_exhausted() -> None:
    # Given a transient failure at the last attempt, older than the dead-letter age
    # When it is classified
    action = on_failure(DOWN, attempts=5, elapsed=60.0, policy=POLICY)

    # Then it is dead-lettered and the last error names the dependency, not the content
    assert isinstance(action, DeadLetter)
    assert action.reason == RETRIES_EXHAUSTED
    assert action.error.describe() == "memory: MEMORY_UNAVAILABLE (status=UNAVAILABLE)"


def test_a_permanent_failure_is_dead_lettered_at_the_first_attempt() -> None:
    # Given a permanent failure on the first delivery
    error = PermanentError("MEMORY_INVALID_ARGUMENT", "status=INVALID_ARGUMENT fields=decisions", dependency="memory")

    # When it is classified
    action = on_failure(error, attempts=1, elapsed=0.0, policy=POLICY)

    # Then it is dead-lettered with its own reason
    assert isinstance(action, DeadLetter)
    assert action.reason == "MEMORY_INVALID_ARGUMENT"


def test_backoff_doubles_is_capped_and_jittered_within_half_to_full() -> None:
    # Given the extremes of the jitter
    # When delays are computed for successive attempts
    low = [POLICY.backoff(n, rand=lambda: 0.0) for n in range(1, 8)]
    high = [POLICY.backoff(n, rand=lambda: 1.0) for n in range(1, 8)]

    # Then they double up to the cap, and jitter spans [d/2, d]
    assert high == [1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 20.0]
    assert low == [d / 2 for d in high]


def test_an_unexpected_exception_becomes_transient_without_its_message() -> None:
    # Given a bug whose message quotes content
    bug = KeyError("Call me on +1 415 555 0134")

    # When it is turned into a worker error
    error = as_worker_error(bug)

    # Then it is retried (budget, then dead letter) and only its class name survives
    assert isinstance(error, TransientError)
    assert "415" not in error.describe()
    assert error.describe() == "UNEXPECTED_ERROR (KeyError)"


@pytest.mark.parametrize(
    "payload",
    [b"\xff\xfe not protobuf \x00\x01", learning_event_pb2.LearningEvent(event_id="evt-1").SerializeToString(), b""],
    ids=["garbage", "missing-fields", "empty"],
)
def test_unparseable_or_incomplete_payloads_are_malformed_events(payload: bytes) -> None:
    # Given a payload that is not a usable LearningEvent
    # When it is parsed
    with pytest.raises(PermanentError) as failure:
        parse_learning_event(payload)

    # Then it is a permanent MALFORMED_EVENT
    assert failure.value.reason == "MALFORMED_EVENT"


def test_a_complete_event_parses_with_its_tool_outcomes() -> None:
    # Given a serialized event
    event = learning_event_pb2.LearningEvent(
        event_id="evt-1",
        trace_id="ab" * 16,
        tenant="acme",
        user="alice",
        content_ref="c-1",
        procedure_versions={"b": "2", "a": "1"},
        tool_outcomes=[learning_event_pb2.ToolOutcome(tool="calendar.create_event", status="ok", summary="Sync")],
    )

    # When it is parsed
    view = parse_learning_event(event.SerializeToString())

    # Then every field the worker needs is there
    assert (view.event_id, view.tenant, view.user, view.content_ref) == ("evt-1", "acme", "alice", "c-1")
    assert view.procedure_versions == (("a", "1"), ("b", "2"))
    assert view.tool_outcomes[0].summary == "Sync"


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details, debug_error_string="")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (grpc.StatusCode.UNAVAILABLE, TransientError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, TransientError),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, TransientError),
        (grpc.StatusCode.INTERNAL, TransientError),
        (grpc.StatusCode.INVALID_ARGUMENT, PermanentError),
        (grpc.StatusCode.NOT_FOUND, PermanentError),
        (grpc.StatusCode.FAILED_PRECONDITION, PermanentError),
    ],
)
def test_peer_status_codes_map_to_retry_or_dead_letter_without_the_status_message(
    code: grpc.StatusCode, kind: type[Exception]
) -> None:
    # Given a failed call whose status message quotes the email
    error = _rpc_error(code, "bad text: Call me on +1 415 555 0134")

    # When it is translated
    translated = translate_rpc_error(error, dependency="memory")

    # Then its kind follows the code, its reason names peer and code, and no content survives
    assert isinstance(translated, kind)
    assert translated.reason == f"MEMORY_{code.name}"
    assert "415" not in translated.describe()
