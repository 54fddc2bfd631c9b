"""The gate in front of ApplyLearning: only decisions policy signed, and none that breaks a hard rule.

Checked before anything is read or written, so a refused call writes nothing. The error names the
decision (`decisions[i]`) and its candidate key, so the worker's dead letter says which one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from services.common.errors import PermissionDenied
from services.common.vocabulary import Decision
from services.memory.core.domain.hard_rules import broken_rule, keeps_text


class DecisionVerifier(Protocol):
    """Verifies policy's signature over one decision for one tenant, user and event."""

    def verify(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bool: ...


class DecisionNotSigned(PermissionDenied):
    """A decision without a valid policy signature for exactly this candidate, event, user and tenant."""

    reason = "DECISION_SIGNATURE_INVALID"


class HardRuleViolated(PermissionDenied):
    """A decision that would store what memory never stores, whoever signed it."""

    reason = "HARD_RULE_VIOLATED"


def admit(
    decisions: tuple[Decision, ...], verifier: DecisionVerifier, *, tenant: str, user: str, event_id: str
) -> tuple[Decision, ...]:
    """Return the decisions to apply (secret text withheld), or raise naming the first refused one."""
    for index, decision in enumerate(decisions):
        label = f"decisions[{index}] (candidate {decision.candidate.candidate_key[:64]!r})"
        if not verifier.verify(decision, tenant=tenant, user=user, event_id=event_id):
            raise DecisionNotSigned(f"{label}: policy's signature is missing or does not match this decision")
        rule = broken_rule(decision.candidate, decision.outcome)
        if rule is not None:
            raise HardRuleViolated(f"{label}: {decision.outcome.value} would break the hard rule {rule}")
    return tuple(_withheld(d) for d in decisions)


def _withheld(decision: Decision) -> Decision:
    if keeps_text(decision.candidate):
        return decision
    return replace(decision, candidate=replace(decision.candidate, text=""))
