"""Passwords handed over with no credential word, and keypad codes read one digit at a time (an eleventh probe).

Written before the code, in two rounds: 44 shapes in families the earlier probes had not reached,
then 11 from the open items of the tenth. 18 came through whole or in part: a value named by what it
opens ("unlock with Hunter-Orbit-19", "you'll need Falcon&Ridge7 for the admin panel", "the key for
the shared drive is plum-velvet-31"), a wireless network named alone ("the wifi at the cabin is
'pinecone-lake-88'"), a password after a user name as "it" ("the login is priya.k and it's
Sunflower#12"), a credential replaced or kept, named by neither word ("set the new one to
Blueberry2026!", "It's Kestrel77, same as always"), a keypad's thing named with its device ("Garage
opener: 55102"), a keypad code one digit at a time ("Alarm disarm is 7-3-1-9"), a bank's "memorable
info", digits half typed and half written ("the PIN is four 4 one 9"), a phone number read out with
"double-oh" and "nine hundred", or after "get me at", and a numbered recovery answer ("A1: Ashford",
"A2) Kowalski"). 16 are now caught. Still through: "the key is 8 flamingos dancing" (the English
"key is" starts too many ordinary sentences) and a hint that gives the password away ("passphrase
hint: it's literally 'purple monkey dishwasher 42'"). The table holds each caught shape and a
neighbour of its family; the look-alikes were written with them.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD = FindingKind.PASSWORD


@MODES
@pytest.mark.parametrize(
    ("text", "value"),
    [
        # what the value opens, with no word naming it
        ("unlock with Hunter-Orbit-19 next time", "Hunter-Orbit-19"),
        ("Unlocks with Orchid#2026, remember", "Orchid#2026"),
        ("you can log in using Tr1cky!Pass from home", "Tr1cky!Pass"),
        ("You'll need Falcon&Ridge7 for the admin panel", "Falcon&Ridge7"),
        ("You'll require Maple!Leaf9 to access the vault", "Maple!Leaf9"),
        ("the key for the shared drive is plum-velvet-31", "plum-velvet-31"),
        ("The key to my locker is Gr33n-Door", "Gr33n-Door"),
        # a wireless network named alone
        ("The wifi at the cabin is 'pinecone-lake-88'", "pinecone-lake-88"),
        ("Wifi: SeaBreeze2025", "SeaBreeze2025"),
        ("wi-fi upstairs is Orchard42!", "Orchard42"),
        ("the hotspot's Blue-Kite-77", "Blue-Kite-77"),
        # a user name, then its password as "it"
        ("Remember: the login is priya.k and it's Sunflower#12", "Sunflower#12"),
        ("username: dsmith, it's Winter#2025", "Winter#2025"),
        # replaced or kept, named by neither word
        ("set the new one to Blueberry2026! as discussed", "Blueberry2026"),
        ("changed mine to Harbor!77 yesterday", "Harbor!77"),
        ("It's Kestrel77, same as always", "Kestrel77"),
        ("It's still Kestrel77, same as before", "Kestrel77"),
        # a keypad's thing named by its device, or its code read one digit at a time
        ("Garage opener: 55102", "55102"),
        ("alarm fob: 2468", "2468"),
        ("Alarm disarm is 7-3-1-9", "7-3-1-9"),
        ("The alarm is 4 4 7 1", "4 4 7 1"),
        ("the padlock is 9.9.1.2", "9.9.1.2"),
        # half typed, half written; read out with "double-oh" and "hundred"; after "get me at"
        ("the PIN is four 4 one 9", "4 one 9"),  # the whole run: "four" alone went before
        ("my passcode: 7 three 1 six", "7 three 1 six"),
        # a numbered recovery answer
        ("Q1: first school? A1: Ashford", "Ashford"),
        ("Q2) your first pet? A2) Rex", "Rex"),
        # a bank's memorable information
        ("memorable info: Penguin", "Penguin"),
        ("memorable data: Penguin7", "Penguin7"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, value: str) -> None:
    # Given a text handing a password over in one of the probe's shapes  When redacted  Then it is gone
    assert_value_replaced(mode, text, PASSWORD, value)


@MODES
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("reach me on oh seven seven double-oh nine hundred one two three", "double-oh nine hundred one two"),
        ("you can get me at five five five, one two one two", "five five five, one two one two"),
        ("text me on seven seven zero zero, nine 0 0, one two three", "seven seven zero zero, nine 0 0"),
    ],
)
def test_a_phone_number_read_out_is_redacted(mode: RedactionMode, text: str, value: str) -> None:
    assert_value_replaced(mode, text, FindingKind.PHONE, value)


@MODES
@pytest.mark.parametrize(
    "text",
    [
        # digit words and typed digits that count, rank or tell the time
        "Call me at 3, not four.",
        "The number of tickets went from 4 to five to 6 to seven.",
        "Press one for sales, 2 for support, three for billing.",
        "Count one 2 three 4 and breathe out.",
        "My number one priority is 2 things: three and four.",
        "Call me after nine, or at 10 if the meeting runs over, one or two hours.",
        "Reach me on Monday, 9 to five, at the office.",
        "Text me when you land at terminal 2, gate five.",
        # numbered answers to questions no recovery form asks, and lists
        "Q1: where is the meeting? A1: Room 4",
        "Options: a) first b) second",
        "1) Plan A2) Plan B",
    ],
)
def test_read_out_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    assert Redactor(mode).redact(text).findings == ()


@MODES
@pytest.mark.parametrize(
    "text",
    [
        # signing in with a provider, a device or a badge
        "Sign in with Google to continue.",
        "Log in with GitHub or your SSO account.",
        "Unlock with Face ID on your iPhone15.",
        "Unlock the door with your badge.",
        "Get in with the team by Friday.",
        # needs that open nothing
        "You'll need Python3 for the build, and Node18 to run the server.",
        "You need Windows11 for the new laptop image.",
        # keys that are not secrets
        "The key to success is consistency.",
        "The key for the chart is at the bottom: Figure-3 shows revenue.",
        "The key to the front door is under the mat.",
        # facts about a network
        "The wifi at the cabin is great, 300Mbps down.",
        "The wifi is 5GHz only; the network name is Cabin-5G.",
        "wifi: Cafe5G, password on the fridge",
        "The wifi network is called Guest-2024.",
        "Wifi is down again since 9am.",
        # logins and replacements of ordinary things
        "The login is handled by Okta and it's working fine now.",
        "The user is bob and it's his first day.",
        "We set the new one to arrive on Monday.",
        "I changed mine to the 2024 model.",
        "They updated the new one to v2.3.1 yesterday.",
        # sameness of ordinary things
        "It's Tuesday, same as always.",
        "The meeting room is B12, same as last time.",
        "Our release is v3.2.1, same as last time.",
        "We're still at v2.1.0, same as before",
        # digits near a lock that are a time, a count or a size
        "Alarm is set for 0 6 3 0 tomorrow.",
        "The garage remote: 2 of them, in the drawer.",
        "The garage opener needs new batteries.",
        "Steps 1 2 3 4 for the alarm setup are in the manual.",
        "The gate opens at 7.30 am.",
        # memorable things that are no answers
        "Our most memorable place was Rome.",
        "The most memorable info was the keynote.",
        # counted digit words after a word that could be a label
        "the code has 12 modules and one 2 three four tests",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When it is redacted
    result = Redactor(mode).redact(text)
    # Then nothing is found in it
    assert result.findings == ()


def test_the_new_shapes_are_secrets_to_policy_s_last_line() -> None:
    # Given candidates that kept a value in one of the new shapes  Then policy's last line refuses them
    assert contains_secret_pattern("You'll need Falcon&Ridge7 for the admin panel")
    assert contains_secret_pattern("The wifi at the cabin is 'pinecone-lake-88'")
    assert contains_secret_pattern("Alarm disarm is 7-3-1-9")
    assert not contains_secret_pattern("The wifi at the cabin is great, 300Mbps down.")
