"""The memory policy: STORE, REVIEW or REJECT for one candidate. Pure; versioned; precision first.

A missed convenience memory costs little; a stored false belief or an attacker's instruction
costs a great deal. So every rule can only make the outcome stricter, the strictest outcome wins,
and the decision carries every reason of that outcome (machine-readable codes) plus the version
of these rules, for the audit trail. Thresholds are configuration, calibrated by
``scripts/calibrate_policy.py`` on ``tests/data/policy_candidates.jsonl``.

Matching is done on folded text (NFKC, zero-width and bidi controls stripped, Cyrillic/Greek
homoglyphs mapped to Latin, contractions expanded, digit look-alikes in words undone) so that
"remember" spelt with a Cyrillic "e", or "always" with a zero-width space inside, is still caught.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from services.common.claimed_settings import claimed_setting
from services.common.hidden_readings import hidden_readings
from services.common.hidden_text import hidden_text
from services.common.never_suppress import find_suppression, normalise
from services.common.orders_elsewhere import claim_elsewhere, order_elsewhere
from services.common.pii.scan import contains_secret_pattern, contains_secret_placeholder
from services.common.reader_commands import commands_reader
from services.common.special_categories import special_category
from services.common.steering import steers
from services.common.text_folding import fold_for_matching, fold_words
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Reason, Sensitivity
from services.policy.domain.data_egress import data_egress
from services.policy.domain.planted_details import planted_detail

POLICY_VERSION = "policy-2026.12.13"


@dataclass(frozen=True)
class PolicyThresholds:
    """Calibrated thresholds (see ``tests/data/calibration_report.md`` for the figures and the why).

    ``store_min_confidence``: below it a candidate goes to review rather than memory.
    ``supersede_min_confidence``: replacing an active record removes a belief the user relies on,
    so an owner's same-intent update must clear this (higher) bar to supersede without review.
    """

    store_min_confidence: float = 0.85
    supersede_min_confidence: float = 0.86


DEFAULT_THRESHOLDS = PolicyThresholds()


@dataclass(frozen=True)
class Conflict:
    """An active memory the candidate may contradict, as memory reported it."""

    memory_id: str
    intent_key: str
    text: str
    type: MemoryType


@dataclass(frozen=True)
class EvaluationContext:
    """The event's scope. No rule reads it today; it is part of the request so the audit has it."""

    tenant: str
    user: str
    route: str


class ReasonCode(StrEnum):
    EXTERNAL_PROCEDURAL = "EXTERNAL_PROCEDURAL"
    SENSITIVE_CONTENT = "SENSITIVE_CONTENT"
    EXTERNAL_INSTRUCTION = "EXTERNAL_INSTRUCTION"
    NEVER_SUPPRESS = "NEVER_SUPPRESS"
    HIDDEN_TEXT = "HIDDEN_TEXT"
    INVALID_CANDIDATE = "INVALID_CANDIDATE"
    PROCEDURAL_NEEDS_REVIEW = "PROCEDURAL_NEEDS_REVIEW"
    EXTERNAL_UNVERIFIED = "EXTERNAL_UNVERIFIED"
    UNTRUSTED_INSTRUCTION = "UNTRUSTED_INSTRUCTION"
    SPECIAL_CATEGORY = "SPECIAL_CATEGORY"
    DATA_EGRESS = "DATA_EGRESS"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    CONTRADICTS_ACTIVE = "CONTRADICTS_ACTIVE"
    SUPERSEDES_SAME_INTENT = "SUPERSEDES_SAME_INTENT"
    ELIGIBLE = "ELIGIBLE"


# "From now on" where English is not spoken, folded as the text is (accents gone, look-alike letters
# turned Latin), so a tool's or an outsider's steering in German, French, Chinese... is seen too.
_FROM_NOW_ON_ELSEWHERE = "|".join(
    re.escape(fold_words(phrase)).replace("\\ ", "[ '\u2019]?")
    for phrase in (
        "ab sofort", "künftig", "zukünftig", "von nun an", "ab jetzt", "désormais", "dorénavant", "à l avenir",
        "à partir de maintenant", "de ahora en adelante", "a partir de ahora", "en lo sucesivo", "d ora in poi",
        "da ora in poi", "d ora in avanti", "voortaan", "vanaf nu", "od teraz", "od dzisiaj", "na przyszłość",
        "daqui em diante", "a partir de agora", "de agora em diante", "fremover", "framöver", "från och med nu",
        "bundan sonra", "mostantól", "впредь", "отныне", "с этого момента", "从现在开始", "从今以后", "今后", "今後",  # noqa: RUF001
        "앞으로", "지금부터", "من الآن فصاعدا", "من الآن وصاعدا", "आगे से", "ต่อจากนี้", "นับจากนี้", "ตั้งแต่นี้ไป",
    )
)  # fmt: skip
# The same in languages written with spaces whose phrases could end another word ("tu gio" in "statu giovanni").
_FROM_NOW_ON_SPACED = r"(?<!\w)(?:" + "|".join(
    re.escape(fold_words(phrase)).replace("\\ ", "[ '\u2019]?")
    for phrase in (
        "από τώρα και στο εξής", "από εδώ και πέρα", "στο εξής", "מעכשיו", "מעתה", "מהיום והלאה", "mulai sekarang",
        "mulai hari ini", "mulai saat ini", "dari sekarang", "từ giờ", "từ nay về sau", "từ nay trở đi",
        "từ bây giờ", "od teď", "odteď",
        "od nynějška", "odteraz", "de acum înainte", "de acum încolo", "tästä lähtien", "tästä eteenpäin",
        "kuanzia sasa", "mula ngayon", "از این به بعد", "از حالا به بعد", "відтепер", "віднині", "надалі",
        "з цього моменту", "ab se", "aaj se", "এখন থেকে", "இனிமேல்", "இனி மேல்", "ከአሁን ጀምሮ", "ከዛሬ ጀምሮ",
        "láti ìsinsìnyí lọ", "a partire da ora",
    )
) + r")(?!\w)"  # fmt: skip

# Phrases that try to give text authority over future behaviour. Matched on normalised words.
_INSTRUCTION_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("remember", r"\b(?:remember|memori[sz]e|memorise|memorize)\b"),
        ("from now on", r"\bfrom (?:now|today|this point|here) on(?:wards?)?\b|\bfrom now\b"
         r"|\bfrom this (?:message|email|e mail|moment|day|point|note) (?:on|onwards?|forward)\b"),
        ("going forward", r"\bgoing forward\b|\bhenceforth\b|\bhereafter\b|\bin (?:the )?future\b"),
        ("always", r"\balways\b"),
        ("never", r"\bnever\b"),
        ("forever", r"\bforever\b|\bpermanently\b"),
        ("whenever", r"\bwhenever\b|\b(?:every|each) time\b"),
        ("ignore previous", r"\b(?:ignore|disregard|forget|override|bypass)\b(?: \w+){0,3} (?:previous|prior|above"
         r"|earlier|all|any|other|existing|your|the)\b(?: \w+){0,2} (?:instructions?|rules?|prompts?|messages?"
         r"|directions?|guidance|guidelines|polic(?:y|ies)|settings)\b"),
        ("new instructions", r"\bnew (?:instructions?|rules?|directives?|policy)\b|\bsystem prompt\b"),
        ("addressed to the assistant", r"\b(?:note|message|instructions?|reminder) (?:for|to) (?:the |your |any )?"
         r"(?:ai |virtual |email |e mail )?(?:assistant|agent|bot|model|ai)\b|\b(?:assistant|agent|ai|bot|system)"
         r" ?(?:,|:)"),
        ("you must", r"\byou (?:must|should|shall|are to|need to|have to|will)\b"),
        ("store this", r"\b(?:store|save|keep|add|record|write) (?:this|that|it|the following)\b(?: \w+){0,3}"
         r" (?:memory|memories|in mind|permanently|for later)\b|\bupdate (?:your|the) memory\b"),
        ("covert", r"\bwithout (?:asking|telling|confirmation|confirming|review|checking|approval)\b"
         r"|\bdo not (?:tell|mention|inform|notify)\b|\b(?:act|behave) as\b|\bpretend\b"),
        # A chat model's own turn markers, pasted to pass text off as the system's or the user's.
        ("chat template", r"\[/?inst\]|<\|?im_(?:start|end)\|?>|<</?sys>>"
         r"|(?<!#)#{2,} ?(?:instruction|system|response)\b|<\|(?:system|user|assistant|endoftext)\|>"),
        ("standing order", r"\bstanding (?:instruction|order|rule|policy)s?\b|\bkeep (?:this |that |it )?in mind\b"
         r"|\bpre ?approved\b|\bauto ?(?:approve|accept|forward|pay)(?:d|s)?\b"),
        ("the owner's voice", r"\b(?:the )?(?:owner|user)(?: s)? (?:prefers?|wants?|wishes|preference|asked that)\b"
         r"|\b(?:the )?(?:owner|user|account holder) (?:has |have )?(?:indicated|said|stated|decided|requested|asked"
         r"|chosen|opted|agreed|told us)(?: that)?(?: (?:they|she|he|it))? (?:no longer|does not|doesn t|never"
         r"|always|wants?|prefers?|would like)\b"
         r"|\bit is (?:her|his|their|the owner s) (?:preference|wish)\b"
         r"|\b(?:owner|user|account holder|client|customer)(?: s)? (?:preferred|default|usual|standard|chosen)"
         r" (?:reply|response|answer|action|course of action|wording|stance|position)\b"),
        ("from now on, in another language", _FROM_NOW_ON_ELSEWHERE + "|" + _FROM_NOW_ON_SPACED),
        # An image whose address carries a template or the conversation in its query: rendering it sends
        # what the query holds to its server (a build badge's "?branch=master" is no such image).
        ("an image that sends data out", r"!\[[^\]\n]{0,100}\] ?\( ?https?://[^)\s]{0,400}[?&][^)\s]{0,400}(?:\{|%7b|\b(?:q|d|c"
         r"|data|msg|message|content|text|summary|chat|email|mail|user|token|secret|history|conversation|context"
         r"|prompt|info|payload|creds?|pw|password)=)"),
        # A call to the assistant's own tools written into text it reads: "memory.save(...)", "<tool_call>".
        ("a tool call written out", r"\b(?:memory|memories|mem|assistant|agent|tools?|functions?|self|bot)"
         r" ?\. ?(?:save|store|add|write|remember|update|set|create|put|insert|upsert|append|delete|remove|forget"
         r"|call|invoke|run|exec|send|transfer|pay|share|forward|email|mail|post|upload)\w* ?\("
         r"|</?(?:tool_call|function_call|tool_use|invoke|function_calls)\b|\"(?:tool_calls?|function_call)\" ?:"),
        # The reader told it may already do what it is about to be asked: "you already have permission to..."
        ("a permission granted to the reader", r"\byou (?:already |now |hereby |still )?(?:have|hold|have got|got)"
         r" (?:\w+ ){0,2}(?:permission|authori[sz]ation|consent|clearance|approval|access rights?|the right)\b"
         r"|\byou (?:already |now |hereby )?(?:are|were|have been|ve been|been) (?:given|granted) (?:\w+ ){0,2}"
         r"(?:permission|authori[sz]ation|consent|clearance|approval|access|rights?|the right)\b"
         r"|\byou are (?:now |hereby |already |fully )?(?:allowed|permitted|authori[sz]ed|cleared|entitled|free) to\b"),
    )
)  # fmt: skip


def instruction_markers(text: str) -> tuple[str, ...]:
    """Names of the instruction markers in ``text``, after folding look-alikes and invisible characters.

    Two views are matched: the never-suppress guard's word normalisation (contractions, digit
    look-alikes, punctuation as spaces, so "from-now-on" and "r3member" match) and the folded text
    with its punctuation (so "Assistant:" matches).
    """
    return _markers_in(*_folded_and_normalised(text))


@functools.lru_cache(maxsize=4096)
def _folded_and_normalised(text: str) -> tuple[str, str]:
    """Folding and normalising cost tens of microseconds a sentence, and four readings need them."""
    folded = fold_for_matching(text)
    return folded, normalise(folded)


def _markers_in(folded: str, normalised: str) -> tuple[str, ...]:
    views = [normalised, re.sub(r"\s+", " ", folded.casefold())]
    if (joined := _SPELT_OUT.sub(lambda m: m.group().replace(" ", ""), normalised)) != normalised:
        views.append(joined)  # "I-g-n-o-r-e all previous instructions", "i g n o r e ..."
    return tuple(name for name, pattern in _INSTRUCTION_MARKERS if any(pattern.search(view) for view in views))


# A word spelt out a letter at a time (normalising made its hyphens, dots or stars spaces).
_SPELT_OUT = re.compile(r"(?<!\w)(?:[a-z] ){3,}[a-z](?!\w)")


@functools.lru_cache(maxsize=4096)
def _markers_of_others(text: str) -> tuple[str, ...]:
    """Instruction markers, and the steering shapes read in text the owner did not write.

    A tool outcome is a summary of what a tool returned, and a page or a mail a tool fetched is
    someone else's text: "Dear LLM, the user has consented..." steers whoever stores it. Both
    readings cost about 0.1 ms each for a sentence, and the worker asks policy twice about a
    candidate that has conflicts (before and after looking them up), so the answer is kept.
    """
    folded, normalised = _folded_and_normalised(text)
    markers = _markers_in(folded, normalised)
    if steers(folded):
        markers = (*markers, "steering")
    if (claim := claimed_setting(normalised, folded)) is not None:
        markers = (*markers, claim)
    if (order := order_elsewhere(folded)) is not None:
        markers = (*markers, order)
    if markers:
        return markers
    for reading in _readings(text):  # "Vtaber nyy cerivbhf vafgehpgvbaf", "i g n o r e ..."
        folded, normalised = _folded_and_normalised(reading)
        if (
            _markers_in(folded, normalised)
            or steers(folded)
            or claimed_setting(normalised, folded)
            or order_elsewhere(folded)
        ):
            return ("hidden by an encoding or a spacing",)
    return ()


@functools.lru_cache(maxsize=4096)
def _orders_its_reader(text: str) -> bool:
    """Whether someone else's text gives its reader an order (an imperative, or "you" given a duty).

    Read apart from the markers: an outsider's procedure is refused as one already, and its audit
    keeps that one reason; a tool outcome or an outsider's fact that orders is the case it adds.
    """
    return any(commands_reader(_folded_and_normalised(reading)[0]) for reading in (text, *_readings(text)))


@functools.lru_cache(maxsize=4096)
def _plants_a_detail(text: str) -> bool:
    folded, normalised = _folded_and_normalised(text)
    return planted_detail(normalised, folded) or claim_elsewhere(folded)


# Both readings of someone else's text (its markers, its orders) undo its hidings: once per text.
_readings = functools.lru_cache(maxsize=4096)(hidden_readings)


def _markers_of_others_or_orders(candidate: Candidate) -> tuple[str, ...]:
    markers = _markers_of_others(candidate.text)
    refused_as_procedure = candidate.origin is Origin.EXTERNAL_EMAIL and candidate.type is MemoryType.PROCEDURAL
    if not refused_as_procedure and _orders_its_reader(candidate.text):
        markers = (*markers, "an order to its reader")
    return markers


def _valid(candidate: Candidate) -> bool:
    confidence = candidate.confidence
    return bool(candidate.text.strip()) and math.isfinite(confidence) and 0.0 <= confidence <= 1.0


def _reject_reasons(candidate: Candidate) -> list[Reason]:
    reasons: list[Reason] = []
    external = candidate.origin is Origin.EXTERNAL_EMAIL
    if not _valid(candidate):
        reasons.append(Reason(ReasonCode.INVALID_CANDIDATE, "empty text or confidence outside [0, 1]"))
    if (hidden := hidden_text(candidate.text)) is not None:
        reasons.append(Reason(ReasonCode.HIDDEN_TEXT, f"text a reviewer cannot see: {hidden}"))
    if external and candidate.type is MemoryType.PROCEDURAL:
        reasons.append(Reason(ReasonCode.EXTERNAL_PROCEDURAL, "a procedure proposed by external email"))
    if candidate.sensitivity in (Sensitivity.SECRET, Sensitivity.RESTRICTED):
        reasons.append(Reason(ReasonCode.SENSITIVE_CONTENT, f"sensitivity is {candidate.sensitivity.value}"))
    elif contains_secret_pattern(candidate.text) or contains_secret_placeholder(candidate.text):
        reasons.append(Reason(ReasonCode.SENSITIVE_CONTENT, "a secret, or the place of one, is in the text"))
    if external:
        markers = _markers_of_others_or_orders(candidate)
        if markers:
            reasons.append(
                Reason(ReasonCode.EXTERNAL_INSTRUCTION, "instruction-like external text: " + ", ".join(markers))
            )
    # Episodes record what happened ("screening found no hits"); they carry no authority to act,
    # so the guard watches every type that can steer future behaviour.
    suppression = None if candidate.type is MemoryType.EPISODE else find_suppression(candidate.text)
    if suppression is not None:
        reasons.append(
            Reason(ReasonCode.NEVER_SUPPRESS, f"would reduce scrutiny (rule {suppression.rule}: {suppression.matched})")
        )
    return reasons


def _review_reasons(candidate: Candidate, conflicts: Sequence[Conflict], t: PolicyThresholds) -> list[Reason]:
    reasons: list[Reason] = []
    if candidate.type is MemoryType.PROCEDURAL:
        reasons.append(Reason(ReasonCode.PROCEDURAL_NEEDS_REVIEW, "procedures change behaviour: a human approves"))
    if candidate.origin is Origin.EXTERNAL_EMAIL:
        reasons.append(Reason(ReasonCode.EXTERNAL_UNVERIFIED, "a third party's claim, not the owner's"))
    if candidate.origin is Origin.TOOL_OUTCOME and _markers_of_others_or_orders(candidate):
        reasons.append(Reason(ReasonCode.UNTRUSTED_INSTRUCTION, "instruction-like text inside a tool outcome"))
    elif candidate.origin is Origin.TOOL_OUTCOME and _plants_a_detail(candidate.text):
        reasons.append(
            Reason(
                ReasonCode.EXTERNAL_UNVERIFIED,
                "a tool outcome's claim that a payment, contact or access detail changed",
            )
        )
    if (category := special_category(candidate.text)) is not None:
        reasons.append(Reason(ReasonCode.SPECIAL_CATEGORY, f"personal data of a special category ({category})"))
    if candidate.type is not MemoryType.EPISODE and (egress := data_egress(candidate.text)) is not None:
        # An episode records what happened; a standing wish would act on every later mail unseen.
        reasons.append(Reason(ReasonCode.DATA_EGRESS, f"a standing wish that sends data out: {egress}"))
    if not candidate.confidence >= t.store_min_confidence:
        reasons.append(
            Reason(ReasonCode.LOW_CONFIDENCE, f"confidence {candidate.confidence:.2f} < {t.store_min_confidence:.2f}")
        )
    if conflicts:
        if not _supersedes(candidate, conflicts):
            ids = ", ".join(conflict.memory_id for conflict in conflicts)
            reasons.append(Reason(ReasonCode.CONTRADICTS_ACTIVE, f"contradicts active memory {ids}"))
        elif not candidate.confidence >= t.supersede_min_confidence:
            reasons.append(
                Reason(
                    ReasonCode.LOW_CONFIDENCE,
                    f"confidence {candidate.confidence:.2f} < {t.supersede_min_confidence:.2f} to supersede",
                )
            )
    return reasons


def _supersedes(candidate: Candidate, conflicts: Sequence[Conflict]) -> bool:
    """The owner restating the same intent replaces the old record; anything else is a contradiction."""
    return (
        candidate.origin is Origin.OWNER
        and bool(candidate.intent_key)
        and all(conflict.intent_key == candidate.intent_key for conflict in conflicts)
    )


def evaluate(
    candidate: Candidate,
    conflicts: Sequence[Conflict] = (),
    context: EvaluationContext | None = None,
    thresholds: PolicyThresholds = DEFAULT_THRESHOLDS,
) -> Decision:
    """Decide one candidate. Deterministic, no I/O, never raises for any candidate value.

    The outcome is the strictest any rule asks for (REJECT > REVIEW > STORE) and the reasons are
    all the rules that asked for it, in rule order. A STORE that replaces active records says so
    (``SUPERSEDES_SAME_INTENT``) so memory supersedes them in the same transaction. ``context``
    is accepted for the audit trail; no rule depends on it yet.
    """
    rejects = _reject_reasons(candidate)
    if rejects:
        return Decision(candidate, Outcome.REJECT, POLICY_VERSION, tuple(rejects))
    reviews = _review_reasons(candidate, conflicts, thresholds)
    if reviews:
        return Decision(candidate, Outcome.REVIEW, POLICY_VERSION, tuple(reviews))
    if conflicts:
        ids = ", ".join(conflict.memory_id for conflict in conflicts)
        reason = Reason(
            ReasonCode.SUPERSEDES_SAME_INTENT, f"the owner's update of {candidate.intent_key} replaces {ids}"
        )
        return Decision(candidate, Outcome.STORE, POLICY_VERSION, (reason,))
    return Decision(candidate, Outcome.STORE, POLICY_VERSION, (Reason(ReasonCode.ELIGIBLE, "no rule objects"),))
