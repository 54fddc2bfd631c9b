"""Recovery phrases, generated passphrases, corrections and values named by what they open (an eleventh probe).

Written before the code: 50 shapes, then 42 more written after the first round's code without
looking at it again, then 37 provider formats and password words in 17 languages. On `16fb5ec`
14 of the first 50 came through redaction (2 of them then held for review by policy, with the
secret in the text a reviewer reads), 7 of the second round's and 2 of the third's: a wallet's
recovery phrase with no label or a label the code did not know ("Backup of my wallet seed:",
"Recovery words for the Ledger —", numbered, one word a line), a generated passphrase after
"unlock with" ("purple-otter-violin-42"), a password corrected ("sorry, typo, it's Hunter3 not
Hunter2") or replaced by a near copy ("changed it from TangoMango54 to TangoMango55"), a value
written before what it opens ("X opens everything") or after a thing as its label ("Vault: X"),
"set it to X", "as the new pw", "X - password for the router", "X <- that's the pw", "pw? X",
"my card's PIN? 3391", "creds (alice / X)", "admin:X@192.168.1.1", Danish "Adgangskoden er X".
All are caught now. Still through, and why: "the key is 8 flamingos dancing" ("the key is" starts
every other piece of advice), "I always use Sunshine88 for everything" (the shape of "I use
Office365 for everything"), a password hint that gives the password away, "the alarm: 0912".

The ordinary text these shapes were measured against (120,000 paragraphs of the project's data,
the standard library's docstrings and /usr/share/doc) is redacted exactly as before.
"""

from __future__ import annotations

import pytest

from services.common.pii.model import FindingKind
from services.common.pii.scan import contains_secret_pattern
from services.common.redaction import RedactionMode, Redactor
from tests.helpers import assert_value_replaced

MODES = pytest.mark.parametrize("mode", list(RedactionMode))
PASSWORD, SECRET = FindingKind.PASSWORD, FindingKind.SECRET

# BIP-39's own test vectors and phrases drawn from its lists (English, Spanish).
TWELVE = "legal winner thank year wave sausage worth useful legal winner thank yellow"
TWENTY_FOUR = (
    "gravity machine north sort system female filter attitude volume fold club stay feature office ecology "
    "stable narrow fog gravity machine north sort system female"
)
SPANISH = "ábaco abdomen abeja abierto abogado abono aborto abrazo abrir abuelo abuso acabar"


@MODES
@pytest.mark.parametrize(
    "text",
    [
        f"Backup of my wallet seed: {TWELVE}",
        f"Recovery words for the Ledger — {TWELVE}",
        f"{TWELVE}",
        f"24 words: {TWENTY_FOUR}",
        "Metamask:\nvessel\nladder\nalcohol\ncousin\nblade\nfence\nauction\nsuspect\nupper\nriver\nwidth\nmosquito",
        "Seed: Vessel, Ladder, Alcohol, Cousin, Blade, Fence, Auction, Suspect, Upper, River, Width, Mosquito",
        "1. scissors 2. invite 3. lock 4. maple 5. supreme 6. raw 7. rapid 8. void 9. congress 10. muscle "
        "11. digital 12. elegant",
        f"Mi frase semilla: {SPANISH}",
    ],
)
def test_a_recovery_phrase_goes_whole_with_or_without_a_label(mode: RedactionMode, text: str) -> None:
    # Given twelve or more words of one BIP-39 list in a row  When redacted
    result = Redactor(mode).redact(text)
    # Then none of its words is left, and it is named a secret
    assert FindingKind.SECRET in result.kinds
    for word in ("legal", "gravity", "mosquito", "Mosquito", "scissors", "elegant", "abuelo"):
        assert word not in result.text


@MODES
@pytest.mark.parametrize(
    "text",
    [
        # eleven listed words are no wallet's phrase
        "abandon ability able about above absent absorb abstract absurd abuse access",
        # prose made of short words breaks a run at its "the", "of", "a"
        "The quick brown fox jumps over the lazy dog while the farmer watches from his old wooden chair near it",
        "Please review the attached draft before Friday and send any comments to the whole team by noon",
    ],
)
def test_words_that_are_no_recovery_phrase_stay(mode: RedactionMode, text: str) -> None:
    assert Redactor(mode).redact(text).text == text


@MODES
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        # a generated passphrase after what it opens, or after a thing as its label
        ("The vault unlocks with purple-otter-violin-42.", PASSWORD, "purple-otter-violin-42"),
        ("log in with 7-velvet-rocket-lamp", PASSWORD, "7-velvet-rocket-lamp"),
        ("Vault: River.Stone.Cloud.88", PASSWORD, "River.Stone.Cloud.88"),
        ("My master phrase: correct horse battery staple", PASSWORD, "correct horse battery staple"),
        # a value written before what it opens
        ("Remember: TangoMango55 opens everything.", PASSWORD, "TangoMango55"),
        ("Ziggurat#55 unlocks the safe in the study.", PASSWORD, "Ziggurat#55"),
        ("FYI BrickLane2022 opens all the lockers downstairs", PASSWORD, "BrickLane2022"),
        # set, with nothing else to say what "it" is: a password rule's shape
        ("New laptop: I set it to Qwerty!123 for now, will change later.", PASSWORD, "Qwerty!123"),
        ("IT set it to Winter2025!! until I pick a new one", PASSWORD, "Winter2025!!"),
        # the password word after the value
        ("The family Netflix is on my email with MapleSyrup_77 as the pw", PASSWORD, "MapleSyrup_77"),
        ("MapleSyrup_77 - password for the router", PASSWORD, "MapleSyrup_77"),
        ("MapleSyrup_77 \u2190 password", PASSWORD, "MapleSyrup_77"),
        ("Gr8Scott! <- that's the pw", PASSWORD, "Gr8Scott!"),
        # asked and answered
        ("pw? Gr8Scott!", PASSWORD, "Gr8Scott!"),
        ("my debit card's PIN? 3391", PASSWORD, "3391"),
        # a pair in brackets, a URL's user and password with no scheme
        ("creds (alice / TangoMango55)", PASSWORD, "TangoMango55"),
        ("credentials [bob | Tr0ub4dor&3]", PASSWORD, "Tr0ub4dor&3"),
        ("admin:Gr8Scott!@192.168.1.1", PASSWORD, "Gr8Scott!"),
        ("rsync -a deploy:T0k3n!9x@build.acme.example:/srv .", PASSWORD, "T0k3n!9x"),
        ("ftp backup:s3cret99@10.0.0.7", PASSWORD, "s3cret99"),
        # Danish, in its definite form and its other word
        ("Adgangskoden er Hest2024", PASSWORD, "Hest2024"),
        ("mit kodeord: Hest2024", PASSWORD, "Hest2024"),
    ],
)
def test_the_value_is_redacted(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    assert_value_replaced(mode, text, kind, value)


@MODES
@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Sorry, typo in my last mail, it's Hunter3 not Hunter2.", ("Hunter3", "Hunter2")),
        ("Oops, I meant Marigold#21, not Marigold#12.", ("Marigold#21", "Marigold#12")),
        ("My bad, it should be Falcon1999 rather than Falcon1998", ("Falcon1999", "Falcon1998")),
        ("the wifi: it's Otter2025 not Otter2024", ("Otter2025", "Otter2024")),
        ("I changed it from TangoMango54 to TangoMango55 yesterday", ("TangoMango54", "TangoMango55")),
        ("We rotated it from Pebble_2024 to Pebble_2025 on Monday.", ("Pebble_2024", "Pebble_2025")),
        ("Reset mine from Otter!Bay8 to Otter!Bay9", ("Otter!Bay8", "Otter!Bay9")),
    ],
)
def test_a_corrected_or_replaced_password_goes_with_the_old_one(
    mode: RedactionMode, text: str, values: tuple[str, str]
) -> None:
    # Given a value corrected or replaced by a near copy of itself  When redacted
    result = Redactor(mode).redact(text)
    # Then both are gone: the old one is the new one give or take a character
    assert not any(value in result.text for value in values)
    assert result.text.count(PASSWORD.placeholder) == 2


@MODES
@pytest.mark.parametrize(
    "text",
    [
        "it's iPhone15 not iPhone14",
        "It's Windows11, not Windows10",
        "it's v2.1 not v2.0",
        "upgraded it from node18 to node20",
        "we switched from python3 to pypy3",
        "I changed it from Monday to Tuesday",
        "set it to UTC+2 for the meeting",
        "PR#123 opens the discussion",
        "The vault door opens with a wheel",
        "Vault: 3rd floor, room 12",
        "laptop: ThinkPad X1 Carbon",
        "Forgot your password? Click here",
        "What is a PIN? 4 digits usually",
        "see mailto:bob2@x.example",
        "Email:jane99@example.com",
        "Contact:bob.smith2@acme.example",
        "git clone git@github.com:acme/repo.git",
    ],
)
def test_look_alikes_come_through(mode: RedactionMode, text: str) -> None:
    # Given ordinary text sharing a word or a shape with a positive  When redacted
    result = Redactor(mode).redact(text)
    # Then no secret is found in it (an address may be, as everywhere)
    assert not {FindingKind.PASSWORD, FindingKind.SECRET} & set(result.kinds)


def test_the_new_shapes_are_secrets_to_policy_s_last_line() -> None:
    # Given candidates that kept a value in one of the new shapes  Then policy's last line refuses them
    assert contains_secret_pattern(f"Backup: {TWELVE}")
    assert contains_secret_pattern("Sorry, typo, it's Hunter3 not Hunter2")
    assert contains_secret_pattern("Remember: TangoMango55 opens everything.")
    assert not contains_secret_pattern("it's iPhone15 not iPhone14")
