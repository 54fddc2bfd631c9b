"""Personal data of a special category (health, belief, sexuality, politics, origin, union, genetic
and biometric data, criminal records) waits for a person's approval instead of being stored.

The positives are a probe of 40 owner and third-party statements written for this change, before
the patterns, and 15 in French, German, Spanish, Italian, Portuguese, Dutch and Polish; the
look-alikes use the same words in their ordinary senses. Before this change policy stored every
positive that was confident and unopposed ("My religion is Islam, so no pork at client dinners"
was an ordinary fact).
"""

from __future__ import annotations

import pytest

from services.common.special_categories import special_category
from services.common.vocabulary import Candidate, MemoryType, Outcome
from services.policy.domain.rules import evaluate
from tests.helpers import owner_candidate

STATEMENTS = [
    "I was diagnosed with type 2 diabetes last year, so keep lunches light.",
    "My therapist moved our sessions to Thursdays, don't book anything then.",
    "I'm on antidepressants, they make me drowsy before 9am.",
    "I'm pregnant, due in March, so no travel after January.",
    "Bob has cancer and is in chemo on Mondays.",
    "I have epilepsy, please avoid venues with strobe lights.",
    "My son is autistic, so I leave at 3pm on Wednesdays.",
    "I use a wheelchair, book step-free venues only.",
    "I'm recovering from surgery until the 20th.",
    "I suffer from migraines, dim the lights in meetings.",
    "I have ADHD, send agendas in advance.",
    "I'm bipolar and my medication changed this week.",
    "Mark is HIV positive; keep this confidential.",
    "My doctor said no flights for six weeks.",
    "I'm Muslim, no meetings during Friday prayers.",
    "I observe Shabbat, nothing from Friday sunset to Saturday night.",
    "I'm Jewish and keep kosher.",
    "I go to church on Sunday mornings, don't schedule anything.",
    "I fast during Ramadan, so no lunch meetings in April.",
    "I'm an atheist, skip the grace at dinners.",
    "I'm gay; my husband Tom will join the gala.",
    "She's a trans woman, use she/her.",
    "I'm bisexual, it's fine to mention to HR.",
    "I came out to my parents last month.",
    "I vote Green in every election.",
    "I'm a registered Republican.",
    "I'm a member of the Labour Party.",
    "My political views are left of centre, avoid that topic with clients.",
    "I'm a union rep at the plant.",
    "I joined the union last spring.",
    "My ethnicity is Roma, some forms ask for it.",
    "I'm of Indigenous descent.",
    "I did a DNA test, I carry the BRCA1 gene.",
    "My fingerprints are registered for the office door.",
    "I have a criminal record from 2010.",
    "He was arrested last week, keep it quiet.",
    "I'm on parole until 2027.",
    "I have a heart condition, no stairs.",
    "Diagnosed with depression in 2023.",
    "I have Crohn's disease, need seats near restrooms.",
]
ORDINARY = [
    "I prefer meetings after 10:00.",
    "I'm vegetarian, no meat at team lunches.",
    "The Church Street office opens at nine.",
    "Book the temple bar restaurant for Friday.",
    "The party on Friday starts at 7.",
    "The union of the two lists is sorted.",
    "The report came out yesterday.",
    "It is a blind spot in our process.",
    "The trans-Atlantic flight leaves at noon.",
    "The meeting is bi-weekly.",
    "I vote we postpone the launch.",
    "We voted for option B.",
    "The doctor's office is closed on Mondays.",
    "My condition for signing is a 30-day notice.",
    "Christian from sales will join.",
    "The battery was charged with a faster charger.",
    "Run the DNA sequencing demo for the biotech client.",
    "The Great Depression chapter is in the appendix.",
    "Fingerprint the build artefacts before release.",
    "The cards were charged with a fee.",
    "Rehab the old bathroom in the office.",
    "Our mission is to serve time-critical workloads.",
    "Health check endpoint returns 200.",
    "I'm allergic to peanuts.",
    "I'm lactose intolerant.",
    "Please use the chemistry lab on floor 2.",
    "The IVF index is rebuilt nightly.",
    "We had a panic about the deadline.",
]

ELSEWHERE = [
    "Je suis diabétique, pas de desserts aux déjeuners d'équipe.",
    "Ich bin schwanger, keine Reisen nach Januar.",
    "Soy musulmana, nada de cerdo en las cenas con clientes.",
    "Sono celiaca e ho il diabete, niente dolci.",
    "Sou muçulmano, sem reuniões durante as orações de sexta.",
    "Ik ben homo, mijn man komt mee naar het gala.",
    "Jestem w ciąży, proszę bez podróży.",
    "Mon psy est le jeudi à 17h, ne rien planifier.",
    "Ich bin Gewerkschaftsmitglied.",
    "J'ai un casier judiciaire, ne le mentionne pas.",
    "Je suis en arrêt maladie jusqu'au 20.",
    "Ich bin Jude und halte koscher.",
    "Jestem katoliczką, w niedziele nie pracuję.",
    "Mijn behandeling loopt tot maart.",
    "Sono omosessuale, puoi dirlo a HR.",
]
ORDINARY_ELSEWHERE = [
    "Je préfère les réunions après 10h.",
    "Ich bevorzuge Videoanrufe.",
    "Prefiero reuniones por la mañana.",
    "Preferisco le riunioni dopo le 10.",
    "Prefiro reuniões de manhã.",
    "Ik heb liever korte vergaderingen.",
    "Wolę spotkania po 10.",
    "Es una buena idea, gracias.",
    "Il est en retard, commence sans lui.",
    "E la mia scelta.",
    "Sie ist Kundin seit 2020.",
    "Jest to ważne spotkanie.",
    "Le projet est un succès.",
    "Der Krebsgang der Verhandlungen nervt.",
    "Il syndicato dei clienti è contento.",
]


def _candidate(text: str, memory_type: MemoryType = MemoryType.FACT) -> Candidate:
    return owner_candidate(text, memory_type)


@pytest.mark.parametrize("text", STATEMENTS + ELSEWHERE)
def test_a_special_category_is_named(text: str) -> None:
    assert special_category(text) is not None


@pytest.mark.parametrize("text", ORDINARY + ORDINARY_ELSEWHERE)
def test_the_same_words_in_their_ordinary_senses_are_not(text: str) -> None:
    assert special_category(text) is None


@pytest.mark.parametrize("text", STATEMENTS[::4])
@pytest.mark.parametrize("memory_type", [MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EPISODE])
def test_policy_holds_a_confident_owner_statement_of_one_for_review(text: str, memory_type: MemoryType) -> None:
    # Given a confident, unopposed owner statement that speaks of a special category  When evaluated
    decision = evaluate(_candidate(text, memory_type))
    # Then a person approves it first, and the reason names the category
    assert decision.outcome is Outcome.REVIEW
    assert [reason.code for reason in decision.reasons] == ["SPECIAL_CATEGORY"]
    assert str(special_category(text)) in decision.reasons[0].message


def test_an_allergy_is_stored_as_the_owner_states_it() -> None:
    # Given an allergy, which an assistant booking a table needs  Then it is stored without review
    assert evaluate(_candidate("I'm allergic to peanuts, tell restaurants.")).outcome is Outcome.STORE


def test_look_alike_letters_do_not_hide_one() -> None:
    # Given "diabetes" written with a Cyrillic letter e and a zero-width space  Then it is still read
    assert special_category("I have diab\u0435t\u200bes, keep lunches light.") == "health"
