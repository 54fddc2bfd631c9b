"""Answers to security questions written as a question and its answer, with no credential word.

"Q: city you were born in? A: Ljubljana", "Frage: Name des ersten Haustiers - Antwort: Rex": the
answer opens the account as a password would, and nothing names it a password. The credential
reader finds "security answer: X" and "maiden name: X" and hands the answer's reading to
`short_answer` here; `security_answers` reads the question-and-answer form, numbered or quoted,
where the question's topic is what a bank or a mail provider asks to recover an account. A
question on any other topic ("Q: where is the meeting? A: Room 4") is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit, hit, is_placeholder_at
from services.common.pii.stated_values import LINK, NON_VALUES

# "A:", "Answer:", "Antwort:", "Respuesta:", "Réponse:" (folded), with an optional number ("A1:").
# A numbered answer may close with a parenthesis, as numbered lists do ("Q2) ... A2) Kowalski").
_ANSWER = re.compile(
    r"(?<![\w])(?:a|ans|answer|antwort|respuesta|reponse|risposta|resposta)[^\S\n]*(?:\d?[^\S\n]*[:=]|\d[^\S\n]*\))"
)
# Each gate is a scan of the text (1-2 µs per 2 KB): the shortest pieces that cover the words above.
_ANSWER_GATES = ("a:", "a :", "answer", "antwort", "respu", "respo", "rispo", "repon")
# "A1:", "A2)": a numbered answer, looked for only where a gate above is missing and the text has a
# question and an answer of one number, "q1" and "a1" (a pattern over every "a" of a mail cost 30 µs
# per 2 KB, and "Q1" alone is in many a quarterly mail).
_NUMBERED_ANSWER = re.compile(r"(?<![\w])a[^\S\n]*\d[^\S\n]*[:=)]")
_NUMBERED_QUESTION = re.compile(r"q\d")
# What recovery questions ask about; looked for in the question before the answer.
_TOPIC = re.compile(
    r"\b(?:born|birth ?place|place of birth|city of birth|geburtsort|maiden|first (?:pet|car|school|job|teacher|boss"
    r"|concert|kiss|love|girlfriend|boyfriend|employer|street)|pet'?s name|(?:erste[sn]?|premier|primer) "
    r"(?:haustier|auto|animal|mascota|voiture|coche)|street (?:you|did you|where)|gr[eo]w up|childhood|best friend"
    r"|high school|elementary school|primary school|nickname|mascot|honeymoon|favou?rite (?:teacher|food|book"
    r"|movie|film|team|colou?r|band|sport|place|city|singer)|(?:father|mother)'?s (?:middle|first) name"
    r"|oldest (?:sibling|cousin|brother|sister)|where (?:did )?you (?:meet|met) your)"
)
_QUESTION_WINDOW = 160
# Where the question starts: its "Q:" or "Question:", else the sentence that ends in "?".
_QUESTION_MARKER = re.compile(r"(?<![\w])(?:q|question|frage|pregunta|domanda|pergunta)[^\S\n]*\d?[^\S\n]*[:=.)]")
_ASKED_LAST = re.compile(r"[^\S\n]*(?:[\-\u2013\u2014|/][^\S\n]*)?(?:\n[^\S\n]*)?\Z")


def _question_start(question: str) -> int | None:
    """Where the question before an answer starts, or None when no question stands there."""
    mark = question.rfind("?")
    if mark != -1 and _ASKED_LAST.match(question, mark + 1):
        return max(question.rfind(end, 0, mark) for end in ".!?\n") + 1
    markers = list(_QUESTION_MARKER.finditer(question))
    return markers[-1].start() if markers else None


# The answer: up to the line's or the sentence's end, a few words at most.
_VALUE = re.compile(
    r"[^\S\n]*[\"`\u201c\u2018]?(?P<value>[^\W_][^\n.;,!?\"`\u201d]{0,40}?)[^\S\n]*(?=[\n.;,!?\"`\u201d]|$)"
)
_MAX_WORDS = 3  # "Ljubljana", "Elm Street", "New York City"; "I'd rather not say" is no answer
# Recovery questions ask about their reader ("your first pet", "city you were born in") or are a
# noun alone ("Geburtsort?"); "our favourite food for the party?" is a question among friends.
_ADDRESSED = re.compile(r"\b(?:you|your|yours|my|dein|deine|deines|ihr|ihre|ihres|tu|su|votre|ton|ta|tua|seu|sua)\b")


# "The answer to 'favourite teacher' is Mrs Lowe": the question quoted, then its answer.
_QUOTED_QUESTION = re.compile(
    r"\banswer (?:to|for) (?:the |my |your )?(?:(?:security |recovery |secret )?question )?"
    r"[\"'\u201c\u2018](?P<question>[^\"'\u201d\u2019\n]{3,80})[\"'\u201d\u2019](?:[^\S\n]*\?)?"
    r"[^\S\n]*(?:is|was|:|=|-)"
)


def _numbered(lower: str) -> bool:
    numbers = {question.group()[1] for question in _NUMBERED_QUESTION.finditer(lower)}
    return any("a" + number in lower for number in numbers) and _NUMBERED_ANSWER.search(lower) is not None


def _quoted_questions(text: str, lower: str) -> Iterator[Hit]:
    for m in _QUOTED_QUESTION.finditer(lower):
        if _TOPIC.search(m.group("question")) is None:
            continue
        value = _VALUE.match(lower, m.end())
        if value is None or len(value.group("value").split()) > _MAX_WORDS:
            continue
        if not is_placeholder_at(text, value.start("value")):
            yield hit(value.start("value"), value.end("value"), FindingKind.PASSWORD, "context:security-qa")


def security_answers(text: str, lower: str) -> Iterator[Hit]:
    """The answer after "A:" when the question before it asks what recovery questions ask, or after
    the question quoted ("the answer to 'first pet' is Rex")."""
    if "answer to" in lower or "answer for" in lower:
        yield from _quoted_questions(text, lower)
    if not any(gate in lower for gate in _ANSWER_GATES) and not _numbered(lower):
        return
    for answer in _ANSWER.finditer(lower):
        question = lower[max(0, answer.start() - _QUESTION_WINDOW) : answer.start()]
        if (asked := _question_start(question)) is None or _TOPIC.search(question, asked) is None:
            continue  # no question before this "A:", or not one a recovery form asks
        asking = question[asked:]
        if _ADDRESSED.search(asking) is None and len(asking.split()) > 4:
            continue
        value = _VALUE.match(lower, answer.end())
        if value is None or len(value.group("value").split()) > _MAX_WORDS:
            continue
        if is_placeholder_at(text, value.start("value")):
            continue
        yield hit(value.start("value"), value.end("value"), FindingKind.PASSWORD, "context:security-qa")


# A name alone after its phrase, as an answer is written: "maiden name Kowalski", "... is Rex".
_NAME_AFTER = re.compile(r"[ \t]+([A-Z][^\W\d_]+(?:-[A-Z][^\W\d_]+)?)(?![\w\-])")


def short_answer(text: str, lower: str, phrase: re.Match[str]) -> Iterator[Hit]:
    """A security answer may be one short word ("first pet: Rex", "maiden name: Li") after a plain link."""
    if "answer" not in phrase.group() and "maiden" not in phrase.group() and "pet" not in phrase.group():
        return
    link = LINK.match(lower, phrase.end())
    if link is not None and link.group("strong") is None and "answer" in phrase.group():
        # "the answer to my security question is Rex": after a plain "is", an answer written as a name
        if (name := _NAME_AFTER.match(text, link.end() - 1)) and name.group(1).lower() not in NON_VALUES:
            yield hit(name.start(1), name.end(1), FindingKind.PASSWORD, "context:security-answer")
        return
    if link is None or link.group("strong") is None:
        # "mother's maiden name Kowalski": a name needs no link when it is written as one
        if "answer" in phrase.group() or (name := _NAME_AFTER.match(text, phrase.end())) is None:
            return
        if name.group(1).lower() not in NON_VALUES:
            yield hit(name.start(1), name.end(1), FindingKind.PASSWORD, "context:security-answer")
        return
    value = re.match(r"[^\W\d_]{2,}", text[link.end() :])
    if value and value.group().lower() not in NON_VALUES and not is_placeholder_at(text, link.end()):
        yield hit(link.end(), link.end() + value.end(), FindingKind.PASSWORD, "context:security-answer")
