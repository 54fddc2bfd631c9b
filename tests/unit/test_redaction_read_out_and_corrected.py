"""Values read out, corrected, or opening a lock, and answers to recovery questions (a tenth probe).

Written before the code: 45 shapes from the ninth probe's open items and their neighbours. 20 came
through: digits written as words after a label ("the PIN is seven three one six", "call me back at
four one five, five five five, one two one two"), an address spelt a letter at a time ("a l i c e @
example . com"), a password spelt letter by letter after "capital", a value corrected after it was
given ("PIN: ****, no wait, it's 7316"), a dash glued to the credential word ("pw- X"), a
combination lock's numbers ("the safe opens with 4-19-27"), a bare "code" in a sentence about what
it opens ("safe deposit box 42, code 7781"), "Disarm with 7316", and a recovery question's answer
after "A:" ("Q: city you were born in? A: Ljubljana"), and a password named by what it repeats
("I use the same one as my email, Kestrel77"). All 20 are now caught; of "The code is 1234, sorry
I mean 5678" only the correction is, as a bare "code" with digits names no secret.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD, SECRET, PHONE = FindingKind.PASSWORD, FindingKind.SECRET, FindingKind.PHONE
BANK_ACCOUNT, GOV_ID = FindingKind.BANK_ACCOUNT, FindingKind.GOV_ID


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # digits read out after a label that says what they are
        ("The combination is three five nine two", SECRET, "three five nine two"),
        ("Der PIN ist eins zwei drei vier", PASSWORD, "eins zwei drei vier"),
        ("le code est un deux trois quatre", SECRET, "un deux trois quatre"),
        ("Passcode: double four, seven, one", PASSWORD, "double four, seven, one"),
        ("the wifi password is nine nine oh two", PASSWORD, "nine nine oh two"),
        (
            "Voicemail: Hi, call me back at four one five, five five five, one two one two. Thanks.",
            PHONE,
            "four one five, five five five, one two one two",
        ),
        ("You can reach me on oh seven seven nine oh one two three four five six", PHONE, "oh seven seven nine"),
        ("My number is two oh six five five five oh one nine eight", PHONE, "two oh six five five five"),
        ("Her phone: six one two, three four five, six seven eight", PHONE, "six one two, three four five"),
        ("mi telefono es seis uno dos tres cuatro cinco seis", PHONE, "seis uno dos tres"),
        ("Account number is one two three four five six seven eight", BANK_ACCOUNT, "one two three four five"),
        ("Social is one two three, four five, six seven eight nine", GOV_ID, "one two three, four five"),
        # a lock's combination read in numbers, a card's security code (three digits), a PIN in Chinese
        ("the combination is twelve, thirty-four, fifty-six", SECRET, "twelve, thirty-four, fifty-six"),
        ("cvv is one two three", PASSWORD, "one two three"),
        ("CVC: seven three seven", PASSWORD, "seven three seven"),
        ("暗证号码是4471", PASSWORD, "4471"),
        ("PIN码：884213", PASSWORD, "884213"),  # noqa: RUF001 - a full-width colon, as Chinese writes it
        # spelt a letter at a time
        ("the wifi password is capital T, r, o, u, t, 4, 2", PASSWORD, "r, o, u, t, 4, 2"),
        ("PIN: 7 3 1 6", PASSWORD, "7 3 1 6"),
        # corrected after it was given
        ("PIN: ****, no wait, it's 7316", PASSWORD, "7316"),
        ("password: Kestrel76 - sorry, typo, it is Kestrel77", PASSWORD, "Kestrel77"),
        ("The code is 1234, sorry I mean 5678", PASSWORD, "5678"),
        # named by what it repeats
        ("I use the same one as my email, Kestrel77", PASSWORD, "Kestrel77"),
        ("same password as for the bank: Tulip!2027", PASSWORD, "Tulip!2027"),
        # a dash glued to the word
        ("pw- Kestrel77", PASSWORD, "Kestrel77"),
        ("PIN- 7316", PASSWORD, "7316"),
        # what a lock opens with
        ("Tell nobody: the vault opens with 31-07-19", PASSWORD, "31-07-19"),
        ("The safe opens with 4-19-27", PASSWORD, "4-19-27"),
        ("Disarm with 7316 then press OFF", PASSWORD, "7316"),
        ("safe deposit box 42, code 7781", SECRET, "7781"),
        ("Box key number is 118 and the code 3391", SECRET, "3391"),
        ("The locker is on floor 2, code is 5521.", SECRET, "5521"),
        # a recovery question and its answer
        ("Q: city you were born in? A: Ljubljana", PASSWORD, "Ljubljana"),
        ("Question 2: Name of your first pet?\nAnswer: Rex", PASSWORD, "Rex"),
        ("Frage: Geburtsort? Antwort: Graz", PASSWORD, "Graz"),
        ("What street did you grow up on? A: Elm Street", PASSWORD, "Elm Street"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    # Given a text stating a value in one of the probe's shapes  When redacted  Then its placeholder replaces it
    assert_value_replaced(mode, text, kind, value)


@MODES
@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("Email me at a l i c e @ example . com", "Email me at [EMAIL@example.com]"),
        ("write to b.o.b @ e x a m p l e . o r g today", "write to [EMAIL@example.org] today"),
        ("a-l-i-c-e at example dot com", "[EMAIL@example.com]"),
    ],
)
def test_an_address_spelt_a_letter_at_a_time_goes_whole(mode: RedactionMode, text: str, redacted: str) -> None:
    # Given an address spelt with spaces between its letters  When redacted  Then only the kept domain is left
    assert Redactor(mode).redact(text).text == redacted


@MODES
@pytest.mark.parametrize(
    "text",
    [
        # number words that count, rank or choose
        "Count one two three four and breathe out.",
        "Steps one, two, three and four are in the guide.",
        "We need two or three more people, maybe four.",
        "The code review had one two three comments.",
        "Five six seven eight, the dancers counted.",
        "Press one for sales, two for support.",
        "one two three four five six seven eight nine ten, a counting song",
        "my number one priority is the launch",
        "the phone has two cameras and one speaker",
        "zip code nine oh two one oh",
        "The pin on the map is one of three.",
        "call me at four or five tomorrow",
        "the code is twenty, thirty or forty",
        "twenty twenty was a year of twists",
        "the cvv one of two checks at checkout",
        # single letters that are not a spelling
        "Options a, b, c or d are open.",
        "U.S.A. and U.K. teams met",
        "the password is in the vault",
        "Plan A: the password rotation ships Friday",
        # corrections of ordinary things
        "The meeting is at 10, sorry I mean 11.",
        "The code is on GitHub, sorry I mean GitLab.",
        "password policy: 12 characters, no wait, 14",
        # sameness that names no password
        "We use the same one as the staging cluster, Postgres16.",
        "Same one as my brother, Tom.",
        # dashes that join words
        "pass- and fail-rates are in the report",
        "password-protected files only",
        # locks and codes that open nothing
        "The vault opens at 9am on weekdays.",
        "The safe opens with a key, ask Bob.",
        "the lock was changed on 12-04-23",
        "Box returned error code 4010 on upload",
        "The box ships with a zip code 90210 label",
        "Dropbox code 2024 release notes",
        # questions that recovery forms do not ask
        "Q: where is the meeting? A: Room 4",
        "Q: what's our favourite food for the party? A: pizza",
        "Q: where were you born? A: I'd rather not say",
        "A: yes, we were born in 1990.",
        "Note A: the first car was red.",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then nothing is found in it
    assert result.findings == ()


def test_the_new_shapes_are_secrets_to_policy_s_last_line() -> None:
    # Given candidates that kept a value in one of the new shapes  Then policy's last line refuses them
    assert contains_secret_pattern("the gate PIN is seven three one six")
    assert contains_secret_pattern("Q: your mother's maiden name? A: Kowalski")
    assert contains_secret_pattern("The safe opens with 4-19-27")
    assert not contains_secret_pattern("Count one two three four and breathe out.")
