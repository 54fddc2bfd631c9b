"""Whose words an owner's sentence carries: her own, or someone else's that she relays.

An owner who pastes, quotes or reports another person's words does not make them hers. A relayed
"I prefer that every invoice is paid to the new account" is the vendor's preference, and stored as
the owner's it would hand the vendor her authority. So a sentence relays speech when it reports
it ("the vendor says: '...'"), quotes a first-person sentence, opens with a quote mark, or follows a
label that names another source ("Bob (vendor) on Slack: ..."); a line that names one introduces a
block of someone else's text ("Copying their text verbatim:"). The rules fail closed: a label
with two kinds of source words hands the words after it away, even where the owner meant a topic.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from services.common.text_folding import fold_for_matching

# Someone else's words inside the owner's sentence: a first-person clause after a verb of saying
# ("the vendor said 'I prefer ...'"), or in quotation marks. The owner relays them; they are not
# the owner's preference, and when they instruct they are an outsider's instruction.
_REPORTED = re.compile(
    r"\b(?:said|says|told (?:me|us|him|her|them)|asked|wrote|writes|claims?|claimed|mentioned|insists?|insisted"
    r"|replied|responded|according to|quote|quoting)\b[^.?!\n]{0,40}?(?:[:,]\s*|\s)[\"\u201c\u201e\u00ab']"
    r"|\b(?:said|says|told (?:me|us)|claims?|claimed|insists?|insisted)\s+(?:that\s+)?(?:i|we)\b",
    re.I,
)
# Quoted first-person words: an opening mark, a first-person word, then a closing mark ('"', "»", ">>"...)
# with no other quote mark between. Read with one pass over the marks: a single pattern read from every
# "<<" to the end of the text, and 32 KB of "<<" cost the worker 16 s.
_QUOTE_OPENER = re.compile(r"[\"\u201c\u201e\u00ab]|<<")
_QUOTE_MARK = re.compile(r"[\"\u201c\u201d\u201e\u00ab\u00bb]")
_CLOSING_MARKS = frozenset('"\u201d\u201c\u00bb')
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i'd|we|my|our|me|us|you)\b", re.I)
# The same in single quotes, which apostrophes also use: an opening quote follows a space or a colon
# and a closing one is followed by no letter ("If they write 'I prefer ...', ignore it", not "I don't").
_SINGLE_QUOTED_FIRST_PERSON = re.compile(
    r"(?:^|(?<=[\s:(]))['\u2018](?=\S)[^'\u2018\u2019\n]*\b(?:i|we|my|our|me|us|you)\b[^'\u2018\u2019\n]*"
    r"(?<=\S)['\u2019](?![^\W\d_])",
    re.I,
)


# What a line or a label before a colon says about the words after it, in four kinds: someone else
# ("the vendor", "they"), a medium ("their email", "on Slack"), a report ("wrote", "below",
# "verbatim", in the languages we meet) and a warning ("spam", "phishing"). Two kinds together, or a
# warning alone, hand the words that follow to someone else: "Bob (vendor) on Slack: ...", "Das
# schrieb der Lieferant: ...", "Copying their text verbatim:", "Spam again: ...". One kind alone
# does not: "My notes from the vendor meeting:", "Email preferences: I prefer calls".
_SOMEONE_ELSE = (
    "they them their theirs he she his him vendor vendors supplier seller sender bank client customer someone"
    " somebody stranger recruiter landlord caller helpdesk lieferant absender fournisseur expediteur proveedor"
    " remitente fornitore mittente leverancier afzender dostawca nadawca fornecedor remetente банк поставщик"
)
_MEDIUM = (
    "message messages email emails e-mail mail sms text texts slack teams whatsapp telegram signal wechat chat"
    " letter voicemail dm tweet post comment nachricht mensaje messaggio bericht wiadomosc mensagem сообщение письмо"
    " website site page screenshot document pdf attachment forum courriel correo webseite seite anhang"
)
_REPORT = (
    "said says wrote writes sent asked claims claimed replied forwarded pasted copied quoted verbatim"
    " schrieb schreibt sagte sagt behauptet ecrit dit affirme escribio escribe dice dijo afirma scritto"
    " scrive detto escreveu disse diz schreef zegt zei napisal pisze mowi написал пишет сказал"
)
_WARNING = (
    "spam phishing scam fraud fraudulent suspicious fake malicious junk unsolicited hoax betrug arnaque estafa truffa"
)


def _any_word(words: str) -> re.Pattern[str]:
    """One of `words`, whole, matched on folded lower-case text (so the words are folded too)."""
    folded = sorted({fold_for_matching(word).lower() for word in words.split()}, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, folded)) + r")(?!\w)")


# Words for text the owner hands to the assistant to work on, not to remember: "Draft for the vendor:
# ...", "Translate into German: ...", "Template: ...". Alone enough, like a warning.
_TEXT_TO_WORK_ON = (
    "draft drafts template translate translation proofread rephrase rewrite reword paraphrase"
    " entwurf vorlage ubersetze ubersetzung brouillon modele traduire traduis borrador plantilla traduce traducir"
    " bozza modello traduci"
    # and words that say what follows is quoted: "Excerpt:", "Mallory's claim:", "Auszug aus der Mail:"
    " excerpt excerpts extract quotation claim auszug zitat extrait citation extracto cita estratto citazione"
    " uittreksel citaat"
)
_KINDS = tuple(_any_word(words) for words in (_SOMEONE_ELSE, _MEDIUM, _REPORT))
_WARNS = _any_word(_WARNING + " " + _TEXT_TO_WORK_ON)
# "below" and "following" point at a message only beside a medium ("message from Bob below"), not
# beside a person ("ideas for his birthday below").
_POINTER = _any_word("below following unten ci-dessous abajo sotto hieronder")
# A sentence that opens with a quote mark of its own (">> I prefer ...", "<<I prefer ...>>"), or
# quotes with ">>" inside it ("Can you check this? >> I prefer ...").
_OPENS_QUOTED = re.compile(r"^\s*(?:>|<<|\u00bb|\u203a)|(?:^|\s)>>|^\s*[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)? > \S")


def announces_someone_elses_words(label: str) -> bool:
    """Whether `label` (a line, or the words before a colon) hands what follows to someone else."""
    return _announces(fold_for_matching(label).lower())


def _announces(lower: str) -> bool:
    someone_else, medium, report = (bool(kind.search(lower)) for kind in _KINDS)
    report = report or (medium and _POINTER.search(lower) is not None)
    return bool(_WARNS.search(lower)) or someone_else + medium + report >= 2


def _relayed_after_label(folded: str) -> bool:
    """ "Bob (vendor) on Slack: I prefer ...": the label before the first colon names another source."""
    colon = re.search(r"[:\uff1a]\s", folded)
    return colon is not None and colon.start() <= 80 and _announces(folded[: colon.start()].lower())


def relays_speech(sentence: str) -> bool:
    """Whether an owner's sentence relays someone else's words: then they are that person's, not the owner's."""
    return _relays(fold_for_matching(sentence))


def quoted_first_person(folded: str) -> bool:
    """Whether first-person words follow an opening quote mark before the closing mark that ends it.

    A quote ends at the next quote mark if that one closes, or else at the last ">>" before it: the
    farthest end a quotation could have, so the widest span to find the words in.
    """
    marks = [m.start() for m in _QUOTE_MARK.finditer(folded)]
    chevrons = [m.start() for m in re.finditer(">>", folded)]
    read_until = -1  # the span up to this end was read already, for an earlier opener
    for opener in _QUOTE_OPENER.finditer(folded):
        following = bisect.bisect_left(marks, opener.end())
        boundary = marks[following] if following < len(marks) else len(folded)
        if boundary < len(folded) and folded[boundary] in _CLOSING_MARKS:
            end = boundary
        else:
            last = bisect.bisect_left(chevrons, boundary) - 1
            if last < 0 or chevrons[last] < opener.end():
                continue
            end = chevrons[last]
        if end <= read_until:
            continue
        if _FIRST_PERSON.search(folded, opener.end(), end):
            return True
        read_until = end
    return False


def _relays(folded: str) -> bool:
    return bool(
        _REPORTED.search(folded)
        or quoted_first_person(folded)
        or _SINGLE_QUOTED_FIRST_PERSON.search(folded)
        or _OPENS_QUOTED.search(folded)
        or _relayed_after_label(folded)
    )


def relayed_flags(sentences: Sequence[str]) -> list[bool]:
    """For each sentence of one part, whether it relays someone else's words.

    A short warning ("Phishing?", "Spam again!", "Scam alert.") hands the rest of its part to
    whoever it warns about: the sentences after it are what the owner is showing, not saying.
    """
    flags: list[bool] = []
    warned = False
    for sentence in sentences:
        folded = fold_for_matching(sentence)  # once per sentence, for both questions
        flags.append(warned or _relays(folded))
        lower = folded.lower()
        warned = warned or (len(lower.split()) <= 3 and _WARNS.search(lower) is not None)
    return flags
