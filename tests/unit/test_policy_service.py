"""The policy process's settings and request validation (the gRPC path is in the integration tests)."""

from __future__ import annotations

import pytest

from services.common.auth_keys import SigningKey
from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import candidate_pb2, policy_service_pb2
from services.policy.bootstrap import PolicySettings
from services.policy.domain.rules import DEFAULT_THRESHOLDS, PolicyThresholds
from services.policy.entrypoints.grpc_server import evaluate_command_from_pb
from services.policy.service.evaluate import evaluate_candidate

ENV = {"MEMLOOP_AUTH_PUBLIC_KEYS": SigningKey.generate().public_pem()}


def _request(**overrides: object) -> policy_service_pb2.EvaluateRequest:
    request = policy_service_pb2.EvaluateRequest(
        candidate=candidate_pb2.Candidate(
            candidate_key="k1",
            type=candidate_pb2.MEMORY_TYPE_PREFERENCE,
            origin=candidate_pb2.ORIGIN_OWNER,
            sensitivity=candidate_pb2.SENSITIVITY_NORMAL,
            confidence=0.87,
            intent_key="meeting_time_window",
            text="Please keep my meetings after 10:00.",
            event_id="evt-1",
            trace_id="ab" * 16,
        ),
        context=policy_service_pb2.EvaluationContext(tenant="acme", user="alice", route="assistant.instruction"),
    )
    for name, value in overrides.items():
        getattr(request, name).CopyFrom(value)
    return request


def test_thresholds_default_to_the_calibrated_values() -> None:
    # Given no threshold in the environment
    # When the settings are built
    settings = PolicySettings.from_env(ENV)

    # Then the calibrated defaults of the rules apply
    assert settings.thresholds == DEFAULT_THRESHOLDS


def test_thresholds_come_from_the_environment_and_change_decisions() -> None:
    # Given a stricter store threshold configured
    env = {**ENV, "MEMLOOP_POLICY_STORE_MIN_CONFIDENCE": "0.95", "MEMLOOP_POLICY_SUPERSEDE_MIN_CONFIDENCE": "0.97"}

    # When the settings are built and a 0.87-confidence preference is evaluated with them
    settings = PolicySettings.from_env(env)
    command = evaluate_command_from_pb(_request())
    strict = evaluate_candidate(command, settings.thresholds)
    default = evaluate_candidate(command, DEFAULT_THRESHOLDS)

    # Then the configured thresholds are the ones used
    assert settings.thresholds == PolicyThresholds(store_min_confidence=0.95, supersede_min_confidence=0.97)
    assert (default.outcome.value, strict.outcome.value) == ("store", "review")
    assert "LOW_CONFIDENCE" in [reason.code for reason in strict.reasons]


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_a_threshold_outside_zero_to_one_stops_the_process(value: str) -> None:
    # Given an impossible threshold
    # When the settings are built
    # Then the process refuses to start, naming the setting
    with pytest.raises(SystemExit, match="MEMLOOP_POLICY_STORE_MIN_CONFIDENCE"):
        PolicySettings.from_env({**ENV, "MEMLOOP_POLICY_STORE_MIN_CONFIDENCE": value})


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (policy_service_pb2.EvaluateRequest(context=policy_service_pb2.EvaluationContext(tenant="acme")), "candidate"),
        (_request(context=policy_service_pb2.EvaluationContext(tenant="acme")), "context.user"),
        (_request(candidate=candidate_pb2.Candidate(candidate_key="k", confidence=0.9)), "candidate.type"),
        (
            _request(
                candidate=candidate_pb2.Candidate(
                    candidate_key="k",
                    type=candidate_pb2.MEMORY_TYPE_FACT,
                    origin=candidate_pb2.ORIGIN_OWNER,
                    confidence=2,
                )
            ),
            "candidate.confidence",
        ),
    ],
    ids=["no-candidate", "no-user", "unspecified-type", "confidence-out-of-range"],
)
def test_invalid_requests_name_the_offending_field(request_: policy_service_pb2.EvaluateRequest, field: str) -> None:
    # Given an invalid request
    # When it is validated
    with pytest.raises(InvalidArgument) as failure:
        evaluate_command_from_pb(request_)

    # Then the error names the field
    assert failure.value.violations[0].field == field


def test_a_conflict_with_unspecified_type_is_invalid() -> None:
    # Given a conflicting record without a type
    request = _request()
    request.conflicts.add(memory_id="mem-1", intent_key="meeting_time_window", text="after 10:00")

    # When it is validated
    with pytest.raises(InvalidArgument) as failure:
        evaluate_command_from_pb(request)

    # Then the error names the conflict's field
    assert failure.value.violations[0].field == "conflicts[0].type"
