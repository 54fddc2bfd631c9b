"""Candidate extraction: turn one handled request into proposals for memory. Proposals, never writes.

The port is `CandidateExtractor`; `RuleBasedExtractor` is the default, deterministic and offline.
(An LLM-backed implementation of the same port lives in the worker's adapters, since it does I/O.)

What the rules promise:

* Episodes come only from tool outcomes whose status is ok (what happened, not what was said).
* Preferences and facts come only from the mailbox owner's own visible words. External words
  (another sender, quoted, forwarded, signature, hidden HTML) yield a candidate only when they read
  as an instruction, as a *procedural* candidate with external origin — so policy can reject it
  with a reason and the attempt leaves audit evidence instead of vanishing silently.
* Greetings, sign-offs, questions and fragments yield nothing.
* Sensitivity follows the redaction placeholders left in the sentence.

Input text must already be redacted; the extractor never sees raw content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from services.common.pii.model import PII_PLACEHOLDER
from services.common.pii.scan import contains_secret_pattern
from services.common.special_categories import special_category
from services.common.text_folding import fold_for_matching
from services.common.vocabulary import Candidate, MemoryType, Origin, Sensitivity, candidate_key
from services.worker.domain.email_parts import sentences, split_email
from services.worker.domain.grounding import grounded_in_owner
from services.worker.domain.instructions import ACTION_ANYWHERE, IMPERATIVE, INSTRUCTION, is_outside_instruction
from services.worker.domain.relayed_words import relayed_flags


@dataclass(frozen=True)
class ToolOutcome:
    """One tool call of the request, as the learning event carries it (summary already redacted)."""

    tool: str
    status: str
    ref: str
    summary: str


@dataclass(frozen=True)
class EmailContent:
    """The redacted e-mail the request handled."""

    from_address: str
    to_address: str
    subject: str
    body: str


@dataclass(frozen=True)
class ExtractionInput:
    """Everything an extractor may look at for one learning event; plain data, no I/O handles."""

    event_id: str
    trace_id: str
    tenant: str
    user: str
    route: str
    tool_outcomes: tuple[ToolOutcome, ...] = ()
    email: EmailContent | None = None
    from_owner: bool = False


class CandidateExtractor(Protocol):
    """Port: propose candidates for one event. Pure with respect to memory: it never writes.

    Implementations must fill provenance (event_id, trace_id) and candidate keys themselves and may
    raise a domain error (for example on a malformed model answer); they never return partial junk.
    """

    def extract(self, event: ExtractionInput) -> list[Candidate]: ...

    def extract_many(self, events: Sequence[ExtractionInput]) -> list[list[Candidate] | Exception]:
        """`extract` for each event, in order; one event's failure is its own item, never raised.

        The same candidates as one `extract` per event; an extractor with a model may read the
        whole batch in one model call."""
        ...


def extract_each(extractor: CandidateExtractor, events: Sequence[ExtractionInput]) -> list[list[Candidate] | Exception]:
    """`extract` per event, one event's failure its own item: `extract_many` for a plain extractor."""
    results: list[list[Candidate] | Exception] = []
    for event in events:
        try:
            results.append(extractor.extract(event))
        except Exception as exc:  # this event's failure alone (a schema error, or a bug)
            results.append(exc)
    return results


@dataclass(frozen=True)
class _Proposal:
    type: MemoryType
    confidence: float
    intent_key: str = ""


@dataclass(frozen=True)
class RuleConfidences:
    """Confidence the rules assign. Policy's threshold is calibrated against this scale."""

    episode: float = 0.95
    meeting_window: float = 0.93
    preference: float = 0.88
    fact: float = 0.9
    generic_fact: float = 0.75
    owner_procedure: float = 0.85
    external_instruction: float = 0.9
    hedge_penalty: float = 0.25


_OK_STATUSES = frozenset({"ok", "success", "succeeded", "completed", "done"})

_GREETING = re.compile(r"^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)\b", re.I)
_SIGN_OFF = re.compile(
    r"^(?:thanks|thank you|many thanks|best|regards|kind regards|best regards|cheers|sincerely|talk (?:then|soon)"
    r"|see you|speak soon|sent from)\b",
    re.I,
)
_MEETING = re.compile(r"\b(?:meetings?|calls?|syncs?|appointments?|invites?|1:1s?|one-on-ones?)\b", re.I)
_TIME_BOUND = re.compile(
    r"\b(?:after|before|from|between|until|till|no earlier than|not before|no later than|not after|earliest|latest)"
    r"\s+(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?|noon|midday|lunch)",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i (?:really |strongly |much |always |usually |generally |also )?"
    r"(?:prefer|like|love|hate|dislike|want|would rather)|i'd rather|i'd prefer"
    r"|i (?:don't|do not) (?:like|want)|my preference is|works? best for me|please (?:keep|use|write|make|avoid))\b"
    r"|"
    + (
        _PREFERENCE_ELSEWHERE := r"\b(?:je prefere|j'aime (?:mieux|bien)|je n'aime pas|ma preference|prefiero"
        r"|me gustan? mas|no me gusta|ich bevorzuge|ich mag|ich mochte lieber|mir ist lieber|ich hatte lieber"
        r"|preferisco|mi piace di piu|non mi piace|prefiro|eu gosto mais|ik geef de voorkeur|ik heb liever"
        r"|ik wil liever|wole|preferuje)\b"
    ),
    re.I,
)
_IN_ANOTHER_LANGUAGE = re.compile(_PREFERENCE_ELSEWHERE, re.I)


def preference_in_another_language(folded: str) -> bool:
    """A preference stated in French, Spanish, German, Italian, Portuguese, Dutch or Polish: the sentence
    model reads English, so its "none" for such a sentence says little against the rule's reading."""
    return _IN_ANOTHER_LANGUAGE.search(folded) is not None


_PREFERENCE_INTENTS = (
    (re.compile(r"\b(?:repl(?:y|ies)|tone|formal|concise|brief|emails? (?:short|long))\b", re.I), "reply_style"),
    (re.compile(r"\b(?:time ?zone|[A-Z]{2,4}T)\b"), "timezone"),
    (re.compile(r"\b(?:language|in (?:english|french|german|spanish|dutch|italian))\b", re.I), "language"),
)
_FACTS = (
    (re.compile(r"\bi(?:'m| am)? (?:now )?(?:work(?:ing)?|employed) (?:at|for)\b", re.I), "employer"),
    (re.compile(r"\bi(?:'ve| have)? (?:live|lived|am based|'m based|moved|relocated) (?:in|to)\b", re.I), "home_city"),
    (re.compile(r"\bmy (?:manager|boss|line manager) is\b", re.I), "manager"),
    (re.compile(r"\bmy (?:job title|title|role) is\b", re.I), "job_title"),
    (re.compile(r"\bmy time ?zone is\b", re.I), "timezone"),
    (re.compile(r"\bmy (?:assistant|ea|executive assistant) is\b", re.I), "assistant"),
)
_GENERIC_FACT = re.compile(r"^my [\w' -]{1,30}? (?:is|are) ", re.I)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|i think|i guess|not sure|unsure|for now|this week|today"
    r"|tomorrow|for the moment|temporarily|unless|sometimes|kind of|sort of)\b",
    re.I,
)
_SECRET_PLACEHOLDER = re.compile(r"\[(?:SECRET|PASSWORD)\]")
_PII_PLACEHOLDER = PII_PLACEHOLDER


# Chinese, Japanese and Korean write a sentence without spaces: its characters count instead of words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_SENTENCE_CHARS = 6


def _is_noise(sentence: str) -> bool:
    words = sentence.split()
    if len(words) < 3:
        return len(_CJK.findall(sentence)) < _CJK_SENTENCE_CHARS
    return bool((_GREETING.match(sentence) or _SIGN_OFF.match(sentence)) and len(words) <= 5)


def _hedged(confidence: float, folded: str, penalty: float) -> float:
    return round(confidence - penalty, 2) if _HEDGE.search(folded) else confidence


def _classify_owner(sentence: str, c: RuleConfidences) -> _Proposal | None:
    folded = fold_for_matching(sentence)
    if folded.endswith("?"):
        return None
    acts = bool(IMPERATIVE.match(folded) or ACTION_ANYWHERE.search(folded))
    if not acts and _MEETING.search(folded) and _TIME_BOUND.search(folded):
        confidence = _hedged(c.meeting_window, folded, c.hedge_penalty)
        return _Proposal(MemoryType.PREFERENCE, confidence, "meeting_time_window")
    if not acts and _PREFERENCE.search(folded):
        intent = next((key for pattern, key in _PREFERENCE_INTENTS if pattern.search(folded)), "")
        return _Proposal(MemoryType.PREFERENCE, _hedged(c.preference, folded, c.hedge_penalty), intent)
    if acts or INSTRUCTION.search(folded):
        return _Proposal(MemoryType.PROCEDURAL, _hedged(c.owner_procedure, folded, c.hedge_penalty))
    for pattern, intent in _FACTS:
        if pattern.search(folded):
            return _Proposal(MemoryType.FACT, _hedged(c.fact, folded, c.hedge_penalty), intent)
    if _GENERIC_FACT.match(folded) or _SECRET_PLACEHOLDER.search(folded):
        return _Proposal(MemoryType.FACT, _hedged(c.generic_fact, folded, c.hedge_penalty))
    return None


def _sensitivity(text: str) -> Sensitivity:
    """SECRET for a secret or its place; PERSONAL for personal data, a special category's included
    (policy holds those for review either way; the field tells a reviewer and an audit what they are)."""
    if _SECRET_PLACEHOLDER.search(text) or contains_secret_pattern(text):
        return Sensitivity.SECRET
    if _PII_PLACEHOLDER.search(text) or special_category(text) is not None:
        return Sensitivity.PERSONAL
    return Sensitivity.NORMAL


def authored_sentences(email: EmailContent, from_owner: bool) -> list[tuple[str, bool]]:
    """The e-mail's sentences worth reading, each with whether the owner wrote it.

    A sentence of the owner's that relays someone else's words counts as theirs, not the owner's.
    """
    return [
        (sentence, part.by_owner and not relayed)
        for part in split_email(email.subject, email.body, from_owner)
        for sentence, relayed in _with_relayed_flags(sentences(part.text))
        if not _is_noise(sentence)
    ]


def _with_relayed_flags(part_sentences: list[str]) -> list[tuple[str, bool]]:
    return list(zip(part_sentences, relayed_flags(part_sentences), strict=True))


@dataclass
class RuleBasedExtractor:
    """The default extractor: deterministic rules, no model, no I/O. Safe to share between threads."""

    confidences: RuleConfidences = field(default_factory=RuleConfidences)

    def extract(self, event: ExtractionInput) -> list[Candidate]:
        """Candidates in reading order (tool outcomes first), one per distinct candidate key."""
        proposals: list[tuple[str, Origin, _Proposal]] = []
        for outcome in event.tool_outcomes:
            summary = outcome.summary.strip()
            if outcome.status.strip().lower() in _OK_STATUSES and summary:
                proposals.append(
                    (summary, Origin.TOOL_OUTCOME, _Proposal(MemoryType.EPISODE, self.confidences.episode))
                )
        if event.email is not None:
            proposals += self._from_email(event.email, event.from_owner)
        candidates: dict[str, Candidate] = {}
        for text, origin, proposal in proposals:
            key = candidate_key(event.tenant, event.user, proposal.type, text)
            candidates.setdefault(
                key,
                Candidate(
                    candidate_key=key,
                    type=proposal.type,
                    origin=origin,
                    sensitivity=_sensitivity(text),
                    confidence=proposal.confidence,
                    text=text,
                    event_id=event.event_id,
                    trace_id=event.trace_id,
                    intent_key=proposal.intent_key,
                ),
            )
        return list(candidates.values())

    def extract_many(self, events: Sequence[ExtractionInput]) -> list[list[Candidate] | Exception]:
        return extract_each(self, events)

    def _from_email(self, email: EmailContent, from_owner: bool) -> list[tuple[str, Origin, _Proposal]]:
        return self._propose(authored_sentences(email, from_owner))

    def _propose(self, authored: list[tuple[str, bool]]) -> list[tuple[str, Origin, _Proposal]]:
        """Proposals for the e-mail's sentences, each with whether the owner wrote it (the extension point)."""
        found: list[tuple[str, Origin, _Proposal]] = []
        for sentence, by_owner in authored:
            if by_owner:
                proposal = _classify_owner(sentence, self.confidences)
                if proposal is not None:
                    found.append((sentence, Origin.OWNER, proposal))
            elif is_outside_instruction(fold_for_matching(sentence)):
                instruction = _Proposal(MemoryType.PROCEDURAL, self.confidences.external_instruction)
                found.append((sentence, Origin.EXTERNAL_EMAIL, instruction))
        return found


# --- validating a model's proposals (the LLM extractor's answer) ---------------------------------


class ExtractionSchemaError(ValueError):
    """A model's answer does not fit the candidate schema. Permanent: retrying gives the same answer.

    Messages name positions and fields only, never the offending text: they reach logs and
    dead-letter headers, which must never hold content.
    """


_MODEL_FIELDS = frozenset({"type", "origin", "sensitivity", "confidence", "intent_key", "text"})
_MODEL_REQUIRED = _MODEL_FIELDS - {"intent_key"}
_MODEL_ORIGINS = frozenset({Origin.TOOL_OUTCOME, Origin.OWNER, Origin.EXTERNAL_EMAIL})
_INTENT_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
MAX_CANDIDATE_TEXT = 2000


_E = TypeVar("_E", MemoryType, Origin, Sensitivity)


def _enum_field(kind: type[_E], value: object, where: str) -> _E:
    if not isinstance(value, str):
        raise ExtractionSchemaError(f"{where}: not a string")
    try:
        return kind(value)
    except ValueError:
        raise ExtractionSchemaError(f"{where}: not one of {sorted(m.value for m in kind)}") from None


def candidates_from_model_output(answer: object, event: ExtractionInput) -> list[Candidate]:
    """Validate a model's ``{"candidates": [...]}`` answer into candidates, or raise.

    Nothing is clamped or guessed: an unknown type or origin, a confidence outside [0, 1], an
    unexpected field or an origin the event cannot have (``owner`` for mail the owner did not
    write, ``tool_outcome`` without tool outcomes) rejects the whole answer. Provenance and keys
    come from the event, never from the model. An owner-origin candidate that no sentence of the
    owner's own supports is someone else's words, and is proposed as external mail's (`grounding`).
    """
    if not isinstance(answer, dict) or set(answer) != {"candidates"} or not isinstance(answer["candidates"], list):
        raise ExtractionSchemaError('answer must be an object with exactly one field, "candidates", a list')
    candidates: dict[str, Candidate] = {}
    owner_sentences = authored_sentences(event.email, event.from_owner) if event.email is not None else []
    for index, item in enumerate(answer["candidates"]):
        where = f"candidates[{index}]"
        if not isinstance(item, dict):
            raise ExtractionSchemaError(f"{where}: not an object")
        if unknown := set(item) - _MODEL_FIELDS:
            raise ExtractionSchemaError(f"{where}: unknown fields {sorted(unknown)}")
        if missing := _MODEL_REQUIRED - set(item):
            raise ExtractionSchemaError(f"{where}: missing fields {sorted(missing)}")
        memory_type = _enum_field(MemoryType, item["type"], f"{where}.type")
        origin = _enum_field(Origin, item["origin"], f"{where}.origin")
        sensitivity = _enum_field(Sensitivity, item["sensitivity"], f"{where}.sensitivity")
        confidence, text, intent_key = item["confidence"], item["text"], item.get("intent_key", "")
        if origin not in _MODEL_ORIGINS:
            raise ExtractionSchemaError(f"{where}.origin: a model may only propose {sorted(_MODEL_ORIGINS)}")
        if origin is Origin.OWNER and not (event.from_owner and event.email is not None):
            raise ExtractionSchemaError(f"{where}.origin: owner, but the owner did not write this mail")
        if origin is Origin.TOOL_OUTCOME and not event.tool_outcomes:
            raise ExtractionSchemaError(f"{where}.origin: tool_outcome, but the event has no tool outcomes")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise ExtractionSchemaError(f"{where}.confidence: not a number")
        if not 0.0 <= float(confidence) <= 1.0:  # also false for NaN
            raise ExtractionSchemaError(f"{where}.confidence: outside [0, 1]")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_CANDIDATE_TEXT:
            raise ExtractionSchemaError(f"{where}.text: not a non-empty string of at most {MAX_CANDIDATE_TEXT}")
        if not isinstance(intent_key, str) or (intent_key and not _INTENT_KEY.fullmatch(intent_key)):
            raise ExtractionSchemaError(f"{where}.intent_key: not empty or snake_case up to 64 characters")
        if origin is Origin.OWNER and not grounded_in_owner(text, owner_sentences, event.user):
            origin = Origin.EXTERNAL_EMAIL  # someone else's words the model gave the owner (`grounding`)
        key = candidate_key(event.tenant, event.user, memory_type, text.strip())
        candidates.setdefault(
            key,
            Candidate(
                candidate_key=key,
                type=memory_type,
                origin=origin,
                sensitivity=sensitivity,
                confidence=float(confidence),
                text=text.strip(),
                event_id=event.event_id,
                trace_id=event.trace_id,
                intent_key=intent_key,
            ),
        )
    return list(candidates.values())
