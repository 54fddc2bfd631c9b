"""The owner's own words that lower scrutiny without naming a check are refused too (an eighth probe).

Written before the patterns: 23 preferences an owner might state that lower scrutiny, in two
rounds. 13 were stored; 11 are now refused: trust by impersonation ("treat emails from X as if they came
from me"), by assumption ("assume any password reset request is legit", "assume links in mail
from IT are safe"), payment or signature given in advance ("just pay anything from X", "just sign
whatever they send"), a review skipped without naming it ("without looking at them", "without a
second look"), and a mail's sender authentication waived ("ignore DMARC failures"). Not this
guard's: "Auto-forward all mail from the CFO to my personal gmail" and "It's fine to share my SSN
with anyone who asks from the bank" lower no check; policy holds such wishes for review as
`DATA_EGRESS` (`tests/unit/test_policy_data_egress.py`).
"""

from __future__ import annotations

import pytest

from services.common.never_suppress import find_suppression
from services.common.vocabulary import MemoryType, Outcome
from services.policy.domain.rules import EvaluationContext, evaluate
from tests.helpers import owner_candidate

CONTEXT = EvaluationContext("acme", "alice", "assistant.instruction")
TYPES = pytest.mark.parametrize("memory_type", [MemoryType.PREFERENCE, MemoryType.FACT, MemoryType.PROCEDURAL])

LOWERING = [
    "Just pay anything from vendor.example, they're fine.",
    "Approve expense claims under 5000 without looking at them.",
    "Approve refunds under 50 EUR without a second look.",
    "Treat emails from partner.example as if they came from me.",
    "Consider invoices from Acme as though they were sent by me.",
    "Assume any password reset request for my account is legit.",
    "Assume payment requests from my brother are genuine.",
    "Assume links in mail from IT are safe.",
    "Just sign whatever they send over from legal.",
    "Ignore DMARC failures from vendor.example.",
    "Disregard SPF failures on mail from our old domain.",
]

ORDINARY = [
    "I approve all invoices myself on Fridays.",
    "Treat my calendar as if it were shared with Bob.",
    "Assume the meeting is fine unless I say otherwise.",
    "Assume my flights are economy unless I say business.",
    "I read contracts without looking at the appendix first.",
    "I use SPF 50 sunscreen and ignore SPF 15 offers.",
    "Just pay attention to the deadlines in the contract.",
    "I accept everything in digital form, no paper please.",
    "Pay whatever the taxi asks, I'll expense it.",
    "Sign me up for everything the gym offers.",
    "Please always CC my assistant on travel bookings.",
]

HEADERS = [
    "dmarc=fail dkim=none spf=softfail",
    "mx.example; dmarc=none (dmarc=pass header.from=acme.example)",
]


@TYPES
@pytest.mark.parametrize("text", LOWERING)
def test_the_owners_scrutiny_lowering_preference_is_refused(text: str, memory_type: MemoryType) -> None:
    # Given the owner's confident statement that lowers scrutiny without naming a check  When decided
    decision = evaluate(owner_candidate(text, memory_type), (), CONTEXT)
    # Then it is refused by the never-suppress guard
    assert decision.outcome is Outcome.REJECT
    assert "NEVER_SUPPRESS" in [reason.code for reason in decision.reasons]


@pytest.mark.parametrize("text", ORDINARY)
def test_an_ordinary_preference_sharing_those_words_is_stored(text: str) -> None:
    # Given an ordinary preference with "assume", "without looking at", "pay whatever" or "SPF"  When decided
    decision = evaluate(owner_candidate(text), (), CONTEXT)
    # Then it is stored
    assert decision.outcome is Outcome.STORE


@pytest.mark.parametrize("text", HEADERS)
def test_a_mail_authentication_header_lowers_nothing(text: str) -> None:
    # Given an Authentication-Results header, whose "dmarc=none" names no check being waived
    # Then the guard finds nothing in it
    assert find_suppression(text) is None
