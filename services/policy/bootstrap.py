"""The policy process's composition root: settings from the environment, the servicer wired to them.

Thresholds are configuration (MEMLOOP_POLICY_STORE_MIN_CONFIDENCE,
MEMLOOP_POLICY_SUPERSEDE_MIN_CONFIDENCE); their defaults are the calibrated values in
`services.policy.domain.rules.PolicyThresholds`, so an unconfigured deployment runs the
calibrated policy, and a recalibration is a deploy-time change, not a code change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from services.common.app import App
from services.common.decision_signing import load_signer
from services.common.gen.memloop.v1 import policy_service_pb2, policy_service_pb2_grpc
from services.common.grpc_server import Registration, full_service_name
from services.common.priority import LearningPriority, lower_group_once_started, lower_process
from services.common.settings import CommonSettings, env_float
from services.policy.domain.rules import DEFAULT_THRESHOLDS, PolicyThresholds
from services.policy.entrypoints.grpc_server import PolicyServicer


@dataclass(frozen=True)
class PolicySettings:
    """Everything the policy process reads from its environment, once."""

    common: CommonSettings
    thresholds: PolicyThresholds
    signing_key: str  # PEM or a path to one: the Ed25519 key that signs decisions (policy only)
    learning: LearningPriority = field(default_factory=LearningPriority)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> PolicySettings:
        env = os.environ if env is None else env
        thresholds = PolicyThresholds(
            store_min_confidence=_confidence(
                env, "MEMLOOP_POLICY_STORE_MIN_CONFIDENCE", DEFAULT_THRESHOLDS.store_min_confidence
            ),
            supersede_min_confidence=_confidence(
                env, "MEMLOOP_POLICY_SUPERSEDE_MIN_CONFIDENCE", DEFAULT_THRESHOLDS.supersede_min_confidence
            ),
        )
        signing_key = env.get("MEMLOOP_POLICY_SIGNING_KEY", "").strip()
        if not signing_key:
            raise SystemExit("MEMLOOP_POLICY_SIGNING_KEY is required: memory applies only decisions policy signed")
        return cls(
            common=CommonSettings.from_env("policy", env),
            thresholds=thresholds,
            signing_key=signing_key,
            learning=LearningPriority.from_env(env),
        )


def _confidence(env: Mapping[str, str], name: str, default: float) -> float:
    value = env_float(env, name, default)
    if not 0.0 <= value <= 1.0:
        raise SystemExit(f"setting {name}={value} must be within [0, 1]")
    return value


def build(settings: PolicySettings) -> App:
    """The policy process: one stateless servicer, no background work.

    Only the learning worker calls policy, so the whole process yields to serving like the worker
    does (MEMLOOP_LEARNING_PRIORITY, issue 15), lowered before the server starts its threads."""
    lower_process(settings.learning)
    servicer = Registration(
        policy_service_pb2_grpc.add_PolicyServiceServicer_to_server,
        PolicyServicer(settings.thresholds, load_signer(settings.signing_key)),
        full_service_name(policy_service_pb2, "PolicyService"),
    )
    return App(settings.common, servicers=[servicer], on_start=[lower_group_once_started(settings.learning)])
