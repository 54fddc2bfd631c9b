"""The learned extractor: the rules, plus a sentence classifier that reads what the rules miss.

The rules recognise a few phrasings ("I prefer ...", "my manager is ...") and miss most of the ways
people state a diet, a day off or a sign-off. The learned heads (``sentence_heads``, trained by
``scripts/train_extractor.py`` over MiniLM embeddings) read the type and the intent of any sentence.
Authority stays with the rules and with policy:

* authorship is decided exactly as before (``email_parts``): the heads never make an outsider's
  sentence the owner's;
* the rules are a veto for injection forms: an owner sentence that orders a side-effect action or
  reads as prompt injection keeps the rule's reading (a procedure, for review) and is never
  upgraded; an outsider's sentence can only ever become a *procedural* external candidate, which
  policy rejects with its reason — never a preference, a fact or a review item;
* policy decides every candidate as it does for the rules' ones. The confidence the heads give is
  the probability of the storable type, lowered by the rules' hedge penalty; the store threshold
  is calibrated on that scale by ``scripts/calibrate_policy.py``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from services.common.text_folding import fold_for_matching
from services.common.vocabulary import Candidate, MemoryType, Origin
from services.worker.domain.extraction import (
    ExtractionInput,
    RuleBasedExtractor,
    RuleConfidences,
    _classify_owner,
    _hedged,
    _Proposal,
    authored_sentences,
    extract_each,
    preference_in_another_language,
)
from services.worker.domain.instructions import ACTION, ACTION_ANYWHERE, IMPERATIVE, is_outside_instruction
from services.worker.domain.sentence_heads import Prediction, SentenceHeads


class SentenceEncoder(Protocol):
    """Port: sentences to the embedding rows the heads were trained on."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True)
class LearnedTuning:
    """How far the heads are trusted. Calibrated with the extraction report, not guessed per call.

    ``drop_none``: an owner sentence the rules read as a preference or fact is dropped when the heads
    are this sure it states nothing (sarcasm, a quoted third party, a question without "?").
    ``intent_min``: below it the heads' intent is not used (an empty intent key supersedes nothing).
    ``intent_override``: at or above it the heads' intent wins over the rules' (whose patterns are narrow:
    "I moved to Mountain Time" is a time zone, not a home city).
    ``external_procedural_min``: an outsider's sentence the rules let pass becomes an external
    procedural candidate (rejected by policy, with audit evidence) at this probability.
    """

    drop_none: float = 0.9
    intent_min: float = 0.6
    intent_override: float = 0.85
    external_procedural_min: float = 0.6
    clear_probability: float = 0.5
    clear_confidence: tuple[float, float] = (0.87, 0.96)

    def confidence(self, storable: float) -> float:
        """The heads' storable probability on the rules' confidence scale.

        At or above ``clear_probability`` the sentence reads as a clear statement: mapped linearly onto
        ``clear_confidence`` (the rules give a clear preference 0.88, a fact 0.9), above the store and
        supersede thresholds. Below it the probability itself is the confidence: policy sends such a
        reading to review with LOW_CONFIDENCE, its stated reason.
        """
        if storable < self.clear_probability:
            return round(storable, 2)
        low, high = self.clear_confidence
        return round(low + (high - low) * (storable - self.clear_probability) / (1.0 - self.clear_probability), 2)


# Prompt-injection forms: text that addresses the agent or its instructions. An owner sentence with
# one keeps the rules' reading; the heads never upgrade it.
_INJECTION_FORM = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,40}\b(?:instructions?|rules?|prompts?|messages?)\b"
    r"|\bsystem prompt\b|\bnew (?:instructions?|rules?|directives?)\b|\b(?:assistant|agent|bot|ai|system)\s*[:,\]]"
    r"|\b(?:note|message|instructions?|reminder) (?:for|to) (?:the |your |any )?(?:ai |email )?"
    r"(?:assistant|agent|bot|model|ai)\b|\byou (?:must|should|shall|are to)\b"
    r"|\b(?:store|save|record|write|update)\b.{0,30}\bmemory\b|\bwithout (?:asking|telling|confirmation|review)\b",
    re.I,
)
_STORABLE = {"preference": MemoryType.PREFERENCE, "fact": MemoryType.FACT}


# "Please reply to me in French", "Write my drafts in a formal tone": an imperative that names only the
# language or tone of the owner's own mail is a style preference, not a procedure with side effects,
# as long as the rest of the sentence orders no action and names no address.
_STYLE_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:reply|respond|write|answer)(?: to me| my (?:drafts|replies|emails|mails))?"
    r" (?:in|with|using) (?:a |an )?[\w-]+(?: tone| style)?\b",
    re.I,
)
_ANY_ACTION = re.compile(rf"\b(?:{ACTION})\b|@|\[EMAIL", re.I)


def _style_only(folded: str) -> bool:
    match = _STYLE_IMPERATIVE.match(folded.strip())
    return match is not None and not _ANY_ACTION.search(folded.strip()[match.end() :])


def _vetoed(folded: str) -> bool:
    if _INJECTION_FORM.search(folded):
        return True
    acts = bool(IMPERATIVE.match(folded) or ACTION_ANYWHERE.search(folded))
    return acts and not _style_only(folded)


def _decided_by_rules(folded: str, by_owner: bool) -> bool:
    """Whether the rules alone settle a sentence, so its model reading would be thrown away: the
    owner's questions and vetoed sentences (`_owner`), an external sentence the rules already read
    as an instruction (`_propose`). Such sentences are not embedded: at a few events per batch the
    encoder is most of the worker's CPU."""
    if by_owner:
        return folded.rstrip().endswith("?") or _vetoed(folded)
    return is_outside_instruction(folded)


class LearnedExtractor(RuleBasedExtractor):
    """`CandidateExtractor`: rule extraction with a learned reading of each e-mail sentence."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        heads: SentenceHeads,
        confidences: RuleConfidences | None = None,
        tuning: LearnedTuning | None = None,
    ) -> None:
        super().__init__(confidences or RuleConfidences())
        self._encoder = encoder
        self._heads = heads
        self._tuning = tuning or LearnedTuning()
        self._read_ahead = threading.local()  # this thread's batch: folded sentence -> its vector

    def extract_many(self, events: Sequence[ExtractionInput]) -> list[list[Candidate] | Exception]:
        """Every e-mail sentence of the batch embedded in one encoder call (a model call per event
        costs several times more per sentence), then each event extracted as `extract` does."""
        folded = list(
            dict.fromkeys(
                text
                for event in events
                if event.email is not None
                for sentence, by_owner in authored_sentences(event.email, event.from_owner)
                if not _decided_by_rules(text := fold_for_matching(sentence), by_owner)
            )
        )
        self._read_ahead.vectors = dict(zip(folded, self._encoder.embed(folded), strict=True)) if folded else {}
        try:
            return extract_each(self, events)
        finally:
            self._read_ahead.vectors = {}

    def _embed(self, folded: list[str]) -> npt.NDArray[np.float32]:
        ahead: dict[str, npt.NDArray[np.float32]] = getattr(self._read_ahead, "vectors", {})
        if ahead and all(text in ahead for text in folded):
            return np.stack([ahead[text] for text in folded])
        return self._encoder.embed(folded)

    def _propose(self, authored: list[tuple[str, bool]]) -> list[tuple[str, Origin, _Proposal]]:
        if not authored:
            return []
        folded = [fold_for_matching(sentence) for sentence, _ in authored]
        read = [
            i
            for i, ((_, by_owner), text) in enumerate(zip(authored, folded, strict=True))
            if not _decided_by_rules(text, by_owner)
        ]
        predictions: dict[int, Prediction] = (
            dict(zip(read, self._heads.predict(self._embed([folded[i] for i in read])), strict=True)) if read else {}
        )
        found: list[tuple[str, Origin, _Proposal]] = []
        for index, ((sentence, by_owner), text) in enumerate(zip(authored, folded, strict=True)):
            prediction = predictions.get(index)
            if by_owner:
                proposal = (
                    _classify_owner(sentence, self.confidences)  # what `_owner` answers for such a sentence
                    if prediction is None
                    else self._owner(sentence, text, prediction)
                )
                if proposal is not None:
                    found.append((sentence, Origin.OWNER, proposal))
            elif prediction is None or (
                prediction.type == "procedural" and prediction.type_probability >= self._tuning.external_procedural_min
            ):
                instruction = _Proposal(MemoryType.PROCEDURAL, self.confidences.external_instruction)
                found.append((sentence, Origin.EXTERNAL_EMAIL, instruction))
        return found

    def _owner(self, sentence: str, folded: str, prediction: Prediction) -> _Proposal | None:
        rule = _classify_owner(sentence, self.confidences)
        if folded.rstrip().endswith("?") or _vetoed(folded):
            return rule
        rule_storable = rule is not None and rule.type in (MemoryType.PREFERENCE, MemoryType.FACT)
        storable = prediction.probability(*_STORABLE)
        if storable > max(prediction.probability("none"), prediction.probability("procedural")):
            intent = self._intent(prediction, rule.intent_key if rule is not None else "")
            kind = max(_STORABLE, key=prediction.probability)
            memory_type = rule.type if rule is not None and rule_storable else _STORABLE[kind]
            learned = _hedged(self._tuning.confidence(storable), folded, self.confidences.hedge_penalty)
            confidence = max(learned, rule.confidence) if rule is not None and rule_storable else learned
            return _Proposal(memory_type, confidence, intent)
        if (
            rule_storable
            and prediction.probability("none") >= self._tuning.drop_none
            and not preference_in_another_language(folded)
        ):
            return None
        return rule

    def _intent(self, prediction: Prediction, rule_intent: str) -> str:
        if (prediction.intent_key and prediction.intent_probability >= self._tuning.intent_override) or (
            not rule_intent and prediction.intent_probability >= self._tuning.intent_min
        ):
            return prediction.intent_key
        return rule_intent
