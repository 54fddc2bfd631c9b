"""The policy's one use case: evaluate a validated candidate with the configured thresholds.

Stateless and deterministic: the same command and thresholds always give the same decision, so
any replica answers alike and a redelivered event gets the decision it got the first time.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.vocabulary import Candidate, Decision
from services.policy.domain import rules


@dataclass(frozen=True)
class EvaluateCommand:
    """One candidate, the active records it may contradict, and the scope of its event."""

    candidate: Candidate
    conflicts: tuple[rules.Conflict, ...]
    context: rules.EvaluationContext


def evaluate_candidate(command: EvaluateCommand, thresholds: rules.PolicyThresholds) -> Decision:
    """STORE, REVIEW or REJECT with every reason and the rules' version. Never raises."""
    return rules.evaluate(command.candidate, command.conflicts, command.context, thresholds)
