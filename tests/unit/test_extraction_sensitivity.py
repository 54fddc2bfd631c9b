"""The extractor's sensitivity field names what a candidate holds: a special category is personal data.

Policy holds a special category for review whatever the field says; the field is what a reviewer,
the audit and the console read about the candidate, and it said "normal" for "I prefer halal meals
because I am Muslim" before this change.
"""

from __future__ import annotations

import pytest

from services.common.vocabulary import Sensitivity
from services.worker.domain.extraction import RuleBasedExtractor
from tests.helpers import owner_mail_event


def _sensitivities(body: str) -> list[Sensitivity]:
    return [candidate.sensitivity for candidate in RuleBasedExtractor().extract(owner_mail_event(body))]


@pytest.mark.parametrize(
    "body",
    [
        "I prefer halal meals because I am Muslim.",
        "I prefer morning meetings because of my therapy sessions.",
        "Please keep my meetings after 08:30 because of my chemo.",
    ],
)
def test_a_special_category_is_marked_personal(body: str) -> None:
    assert _sensitivities(body) == [Sensitivity.PERSONAL]


def test_an_ordinary_preference_stays_normal() -> None:
    assert _sensitivities("Please keep my meetings after 08:30.") == [Sensitivity.NORMAL]
