"""PolicyService servicer: authorize, validate, evaluate, translate — nothing else.

Policy holds no data; only the loop's service identity may ask (the roles table), for the tenant
named in the request's context. Every decision leaves signed with policy's private key, bound to
the tenant, user, event and candidate, so memory can tell it came from here unchanged.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import grpc
from prometheus_client import Counter

from services.common import convert
from services.common.auth import authorize_tenant
from services.common.decision_signing import DecisionSigner
from services.common.errors import InvalidArgument, require
from services.common.gen.memloop.v1 import candidate_pb2, policy_service_pb2, policy_service_pb2_grpc
from services.common.grpc_errors import grpc_method
from services.common.vocabulary import Decision
from services.policy.domain import rules
from services.policy.service.evaluate import EvaluateCommand, evaluate_candidate

_log = logging.getLogger(__name__)
DOMAIN = "policy.memloop"

# Evaluations, not candidates: the worker asks about every candidate without conflicts first and
# again, with them, about those memory finds conflicts for (services/worker/service/decide.py).
# Each applied decision is counted once by memory (memloop_memory_decisions_total).
DECISIONS = Counter(
    "memloop_policy_decisions_total",
    "Policy evaluations by outcome (a candidate with conflicts counts twice)",
    ["outcome"],
)


class PolicyServicer(policy_service_pb2_grpc.PolicyServiceServicer):
    """Evaluates candidates with the thresholds the process was configured with."""

    def __init__(self, thresholds: rules.PolicyThresholds, signer: DecisionSigner) -> None:
        self._thresholds = thresholds
        self._signer = signer

    @grpc_method(DOMAIN)
    def Evaluate(
        self, request: policy_service_pb2.EvaluateRequest, context: grpc.ServicerContext
    ) -> policy_service_pb2.EvaluateResponse:
        authorize_tenant(request.context.tenant)
        return policy_service_pb2.EvaluateResponse(decision=self._decide(evaluate_command_from_pb(request)))

    @grpc_method(DOMAIN)
    def BatchEvaluate(
        self, request: policy_service_pb2.BatchEvaluateRequest, context: grpc.ServicerContext
    ) -> policy_service_pb2.BatchEvaluateResponse:
        """Every request validated first (one bad request fails the call, naming it: AIP-231's atomic
        batch), then each decided as Evaluate does, in request order, and the lot signed with ONE
        signature: each decision carries its proof for its own tenant, user and event
        (`services/common/decision_batch.py`), which memory verifies alone as it does a single one."""
        tenant = require(request.tenant, "tenant")
        authorize_tenant(tenant)
        commands = [batch_command_from_pb(item, tenant, f"requests[{i}]") for i, item in enumerate(request.requests)]
        decisions = [evaluate_candidate(c, self._thresholds) for c in commands]
        signatures = self._signer.sign_many(
            [
                (d, c.context.tenant, c.context.user, c.candidate.event_id)
                for d, c in zip(decisions, commands, strict=True)
            ]
        )
        return policy_service_pb2.BatchEvaluateResponse(
            responses=[
                policy_service_pb2.EvaluateResponse(decision=self._signed(replace(d, signature=s), c))
                for d, s, c in zip(decisions, signatures, commands, strict=True)
            ]
        )

    def _decide(self, command: EvaluateCommand) -> candidate_pb2.Decision:
        """Evaluate, sign for the command's tenant, user and event; the decision as protobuf."""
        decision = evaluate_candidate(command, self._thresholds)
        signature = self._signer.sign(
            decision, tenant=command.context.tenant, user=command.context.user, event_id=command.candidate.event_id
        )
        return self._signed(replace(decision, signature=signature), command)

    def _signed(self, decision: Decision, command: EvaluateCommand) -> candidate_pb2.Decision:
        """Count and log a signed decision; the decision as protobuf."""
        DECISIONS.labels(decision.outcome.value).inc()
        _log.info(
            "evaluated candidate %s: %s %s",
            command.candidate.candidate_key,
            decision.outcome.value,
            ",".join(reason.code for reason in decision.reasons),
            extra={"event_id": command.candidate.event_id},
        )
        return convert.decision_to_pb(decision)


def batch_command_from_pb(request: policy_service_pb2.EvaluateRequest, tenant: str, where: str) -> EvaluateCommand:
    """One request of a batch: its context's tenant must be empty (the batch's) or the batch's own,
    so a batch authorized for one tenant can never obtain a decision signed for another."""
    if request.context.tenant and request.context.tenant != tenant:
        raise InvalidArgument(f"{where}.context.tenant", "must be empty or equal the batch's tenant")
    try:
        return evaluate_command_from_pb(request, tenant=tenant)
    except InvalidArgument as exc:
        raise InvalidArgument(
            f"{where}.{exc.violations[0].field}",
            exc.violations[0].description,
            *(replace(v, field=f"{where}.{v.field}") for v in exc.violations[1:]),
        ) from None


def evaluate_command_from_pb(request: policy_service_pb2.EvaluateRequest, *, tenant: str = "") -> EvaluateCommand:
    """Validate the request, naming the first offending field; raises InvalidArgument. `tenant`,
    when given, stands for an empty context.tenant (a batch's)."""
    if not request.HasField("candidate"):
        raise InvalidArgument("candidate", "is required")
    context = rules.EvaluationContext(
        tenant=require(request.context.tenant or tenant, "context.tenant"),
        user=require(request.context.user, "context.user"),
        route=request.context.route,
    )
    conflicts = tuple(
        rules.Conflict(
            memory_id=require(record.memory_id, f"conflicts[{index}].memory_id"),
            intent_key=record.intent_key,
            text=record.text,
            type=convert.memory_type_from_pb(record.type, f"conflicts[{index}].type"),
        )
        for index, record in enumerate(request.conflicts)
    )
    return EvaluateCommand(candidate=convert.candidate_from_pb(request.candidate), conflicts=conflicts, context=context)
