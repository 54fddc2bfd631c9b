"""A vote and an origin in the other languages, the category names that had no pattern, and figures of
speech (a thirteenth probe, of special categories).

Written before the patterns: 18 statements and 16 look-alikes. 15 statements were missed: a vote
or a party card in French, German, Spanish, Italian, Portuguese, Dutch and Polish; an ethnic origin
abroad ("Soy de origen gitano", "Ich bin Kurde") and in English ("I am Kurdish", "of Roma
descent"); "I see a therapist"; "a member of Unite the union"; and every Polish statement whose
word has an "ł" ("członkiem związku"), a letter folding leaves as it is. Five look-alikes were read
as categories: "a member of the European Union" twice (a trade union), and three figures of speech
with "cancer" (health). All are now read as they should be.
"""

from __future__ import annotations

import pytest

from services.common.special_categories import special_category
from services.common.vocabulary import Outcome
from services.policy.domain.rules import EvaluationContext, evaluate
from tests.helpers import owner_candidate

CATEGORIES = [
    ("Ich habe die Grünen gewählt.", "political opinion"),
    ("J'ai voté pour les socialistes.", "political opinion"),
    ("Voté al PSOE en las últimas elecciones.", "political opinion"),
    ("Ho votato per la Lega.", "political opinion"),
    ("Votei no Chega.", "political opinion"),
    ("Ik stem op GroenLinks.", "political opinion"),
    ("Głosowałem na PiS.", "political opinion"),
    ("Je suis membre du parti socialiste.", "political opinion"),
    ("Soy de origen gitano.", "racial or ethnic origin"),
    ("Ich bin Kurde.", "racial or ethnic origin"),
    ("I am Kurdish, so please skip the Newroz jokes.", "racial or ethnic origin"),
    ("He is of Roma descent.", "racial or ethnic origin"),
    ("I see a therapist every Tuesday at 5.", "health"),
    ("I am a member of Unite the union.", "trade union membership"),
    ("Jestem członkiem związku zawodowego.", "trade union membership"),
    ("My mother has cancer of the pancreas.", "health"),
    ("She was diagnosed with cancer in 2019.", "health"),
    ("My dad has cancer.", "health"),
]
ORDINARY = [
    "Germany is a member of the European Union.",
    "Poland became a member of the European union in 2004",
    "We are members of the credit union.",
    "The server's cancer of technical debt is spreading.",
    "Cancer of the codebase: legacy modules.",
    "Bureaucracy is a cancer on the team.",
    "Ich habe die grüne Jacke gekauft.",
    "Wir haben das Budget gewählt.",
    "J'ai voté pour le projet B.",
    "Il vote toujours à gauche du tableau.",
    "Ho votato per la proposta di Marco.",
    "Ik stem in met het plan.",
    "Votei na proposta de horário.",
    "He voted for the Friday slot.",
    "The Roma office moved to Milan.",
    "I see a pattern in the logs.",
]
CONTEXT = EvaluationContext("acme", "alice", "assistant.instruction")


@pytest.mark.parametrize(("text", "category"), CATEGORIES)
def test_the_category_is_named(text: str, category: str) -> None:
    assert special_category(text) == category


@pytest.mark.parametrize("text", ORDINARY)
def test_the_ordinary_sense_is_not(text: str) -> None:
    assert special_category(text) is None


@pytest.mark.parametrize(("text", "category"), CATEGORIES[::3])
def test_policy_holds_it_for_review(text: str, category: str) -> None:
    # Given the owner's confident statement of one  When decided  Then a person approves it first
    decision = evaluate(owner_candidate(text), (), CONTEXT)
    assert decision.outcome is Outcome.REVIEW
    assert any(reason.code == "SPECIAL_CATEGORY" and category in reason.message for reason in decision.reasons)
