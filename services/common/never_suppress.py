"""The never-suppress guard: a learned procedure or policy may only add scrutiny, never remove it.

Shared by the policy service and the procedures service so both refuse the same texts. Standard
library only. The guard is a conservative denylist over normalised text, and it fails closed: a
text that mentions scrutiny (screening, sanctions, PEP, adverse media, AML/KYC, SAR/STR, alerts,
flags, escalation, reporting, review) together with anything that could reduce it is refused
unless it has one of the few shapes known to *add* scrutiny:

* a prohibition governing a suppressing verb ("never skip the sanctions check", "screening must
  not be waived", "do not skip, waive or bypass KYC");
* a prohibition of acting without scrutiny ("never onboard without screening");
* a negation inside a condition that does not touch a scrutiny word ("escalate if neither
  arrives within 10 days", "escalate if screening has not completed").

Everything else that is ambiguous is refused: double negation ("do not never skip"), carve-outs
("never skip the check unless ..."), narrowing ("only escalate hits above 90%"). Refusing a
harmless rewording costs an officer one rephrase; admitting a suppression path costs a missed
sanctions hit, so every trade-off here leans towards refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.common import never_suppress_languages
from services.common import never_suppress_lexicon as lexicon
from services.common.text_folding import fold_words


@dataclass(frozen=True)
class SuppressionMatch:
    """Why a text was refused: the rule's name and the normalised words that triggered it."""

    rule: str
    matched: str


class SuppressionRefused(ValueError):
    """Raised for an action that would reduce scrutiny; `match` names the rule for the caller's error."""

    def __init__(self, match: SuppressionMatch) -> None:
        super().__init__(
            f"refused by the never-suppress rule {match.rule!r} (matched {match.matched!r}): "
            "a learned procedure may only add scrutiny"
        )
        self.match = match


def ensure_adds_scrutiny(action: str) -> None:
    """Raise `SuppressionRefused` unless `action` is free of every suppression pattern."""
    match = find_suppression(action)
    if match is not None:
        raise SuppressionRefused(match)


# --- normalisation -------------------------------------------------------------------------------

# Right/left quotes, modifier apostrophe, grave, acute and prime all written as an apostrophe.
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc`\u00b4\u2032", "'"))
_LEET = str.maketrans("013457", "oieast")
_IRREGULAR_NEGATIONS = re.compile(r"\b(won|can|shan|ain)(?:'t|t)\b")
_NEGATION_CONTRACTION = re.compile(
    r"\b(do|does|did|is|are|was|were|has|have|had|should|would|could|must|need|might)(?:n't|nt)\b"
)
_IRREGULAR = {"won": "will", "can": "can", "shan": "shall", "ain": "is"}
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n")
_DASH = re.compile("\\s[-\u2013\u2014]+\\s|[\u2013\u2014]+")  # spaced hyphen, en and em dash


def normalise(text: str) -> str:
    """Fold the text to lower-case ASCII-looking words, so spelling tricks cannot dodge the guard.

    Folded and case-folded by `services.common.text_folding` (look-alikes, invisible characters and
    accents), digit look-alikes folded to Latin inside words, contractions expanded
    ("don't" and "dont" → "do not"), punctuation reduced to the sentence ("."), clause (",")
    boundaries the guard reasons about, whitespace collapsed.
    """
    text = fold_words(text).translate(_APOSTROPHES)
    text = _IRREGULAR_NEGATIONS.sub(lambda m: f"{_IRREGULAR[m.group(1)]} not", text)
    text = _NEGATION_CONTRACTION.sub(r"\1 not", text)
    text = re.sub(r"\bcannot\b", "can not", text)
    text = re.sub(r"(?<=[a-z])[!|](?=[a-z])", "i", text)  # sk!p, sk|p
    text = re.sub(r"(?<=[a-z])@|@(?=[a-z])", "a", re.sub(r"(?<=[a-z])\$|\$(?=[a-z])", "s", text))
    text = _SENTENCE_END.sub(" . ", _DASH.sub(" , ", text))
    text = re.sub(r",", " , ", text)
    text = re.sub(r"[^\w\s.,]|_|\.(?!\s|$)", " ", text)
    words = [w.translate(_LEET) if re.search(r"[a-z]", w) and re.search(r"\d", w) else w for w in text.split()]
    return " ".join(words)


# --- function words (the lexicon of scrutiny and suppression is never_suppress_lexicon) ----------

_NEGATORS = frozenset({"not", "never", "no", "nor", "neither", "none", "nothing", "without"})
_PROHIBITORS = frozenset({"not", "never", "no"})
_TRANSPARENT = frozenset(
    {"ever", "just", "simply", "even", "to", "be", "been", "being", "is", "are", "was", "were", "do", "does",
     "did", "must", "should", "shall", "will", "would", "can", "could", "may", "might", "you", "we", "they",
     "please"}
)  # fmt: skip
_COORDINATORS = frozenset({",", "or", "and", "nor"})
_SUBORDINATORS = frozenset(
    {"if", "when", "whenever", "where", "wherever", "once", "after", "before", "until", "till", "while",
     "because", "since", "pending", "unless", "except", "whereas"}
)  # fmt: skip
_CARVE_OUTS = frozenset({"unless", "except"})
_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got"})
_CLAUSE_BREAKS = _SUBORDINATORS | {",", ".", "and", "or", "but", "then"}


def _canonical_tokens(text: str) -> list[str]:
    folded = never_suppress_languages.rewrite(normalise(text))
    for pattern, replacement in lexicon.PHRASES:
        folded = pattern.sub(replacement, folded)
    return folded.split()


def _family(token: str) -> str | None:
    return next((name for name, pattern in lexicon.SCRUTINY_FAMILIES if pattern.fullmatch(token)), None)


def _lexicon_rule(token: str, words: tuple[tuple[str | None, re.Pattern[str]], ...]) -> tuple[bool, str | None]:
    return next(((True, rule) for rule, pattern in words if pattern.fullmatch(token)), (False, None))


# --- analysis ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    """Token range of one clause; a condition clause ("if ...", "until ...") is judged more leniently."""

    start: int
    end: int
    condition: bool


def _segments(tokens: list[str]) -> list[_Segment]:
    """Split at sentence ends, subordinators and "then"; a leading condition also ends at its comma."""
    segments: list[_Segment] = []
    start, condition = 0, False
    for i, tok in enumerate([*tokens, "."]):
        if tok in {".", "then"} or tok in _SUBORDINATORS or (condition and tok == ","):
            if i > start:
                segments.append(_Segment(start, i, condition))
            condition = tok in _SUBORDINATORS
            start = i if condition else i + 1
    return segments


def _has_scrutiny_object(tokens: list[str], i: int) -> bool:
    for tok in tokens[i + 1 : i + 5]:
        if tok in _CLAUSE_BREAKS or tok in _NEGATORS:
            return False
        if _family(tok):
            return True
    return False


def _is_passive_on_scrutiny(tokens: list[str], i: int) -> bool:
    """ "reporting is stopped", "alerts are closed": a participle whose subject is a scrutiny word."""
    if not tokens[i].endswith("ed"):
        return False
    window = tokens[max(0, i - 5) : i]
    breaks = [k for k, tok in enumerate(window) if tok in _CLAUSE_BREAKS]
    window = window[breaks[-1] + 1 :] if breaks else window
    return any(tok in _BE for tok in window) and any(_family(tok) for tok in window)


def _suppressors(tokens: list[str], segment_of: dict[int, _Segment]) -> dict[int, str | None]:
    """Positions of scrutiny-reducing words, each with its fixed rule or None (rule from the object)."""
    found: dict[int, str | None] = {}
    for i, tok in enumerate(tokens):
        always, rule = _lexicon_rule(tok, lexicon.ALWAYS_SUPPRESS)
        if always:
            found[i] = rule
            continue
        conditional, rule = _lexicon_rule(tok, lexicon.OBJECT_SUPPRESS)
        in_condition = segment_of[i].condition if i in segment_of else False
        if conditional and (
            _has_scrutiny_object(tokens, i) or (not in_condition and _is_passive_on_scrutiny(tokens, i))
        ):
            found[i] = rule
    return found


def _governing_prohibitor(tokens: list[str], i: int, suppressors: dict[int, str | None]) -> int | None:
    """The "never"/"not"/"no" that forbids the suppressor at `i`, through a list of suppressors.

    "do not skip, waive or bypass" forbids all three; "no, skip" and "never mind skip" forbid
    nothing, because a coordinator is crossed only when another suppressor stands before it.
    """
    j = i - 1
    while j >= 0:
        if tokens[j] in _TRANSPARENT or j in suppressors:
            j -= 1
        elif tokens[j] in _COORDINATORS:
            k = j - 1
            while k >= 0 and (tokens[k] in _TRANSPARENT or tokens[k] in _COORDINATORS):
                k -= 1
            if k not in suppressors:
                return None
            j = k
        else:
            break
    if j < 0 or tokens[j] not in _PROHIBITORS:
        return None
    if tokens[j] == "no" and not re.search(r"(?:ing|ions?|ers?)$", tokens[j + 1]):
        return None  # "no skipping" forbids; "no skip screening" is not English we trust
    return j


def _consume_prohibited_absence(
    tokens: list[str], segments: list[_Segment], suppressors: dict[int, str | None], consumed: set[int]
) -> None:
    """Mark "never <verb> ... without <scrutiny>" as scrutiny-adding ("never onboard without screening").

    Only when nothing between the prohibition and "without" is a scrutiny word, a suppressor, a
    negation or a coordinator: "do not escalate without approval" gates escalation, so it stays refused.
    """
    for seg in segments:
        for p in range(seg.start, seg.end):
            if tokens[p] not in {"not", "never"} or p in consumed:
                continue
            for w in range(p + 1, min(p + 10, seg.end)):
                tok = tokens[w]
                if tok == "without":
                    if w > p + 1 and w not in consumed:
                        consumed.update({p, w})
                    break
                if tok in _CLAUSE_BREAKS or tok in _NEGATORS or w in suppressors or _family(tok):
                    break


def _meaningful(tokens: list[str], indices: range) -> int | None:
    return next((k for k in indices if tokens[k] not in _TRANSPARENT), None)


def _negation_reaches_scrutiny(tokens: list[str], n: int, seg: _Segment) -> bool:
    """Whether a negation touches a scrutiny word: in a condition only the word right after it.

    In a main clause, anything after it or before it back to the last "and"/"or"/"but", so that
    "escalate to compliance and do not close the case" is admitted and "screening, don't" is not.
    """
    if seg.condition:
        nxt = _meaningful(tokens, range(n + 1, seg.end))
        return nxt is not None and (_family(tokens[nxt]) is not None or tokens[nxt] in _NEGATORS)
    if seg.end - seg.start <= 2:
        return True  # a bare "no." or "never." answers whatever scrutiny the text mentions
    conjunct_start = max((k + 1 for k in range(seg.start, n) if tokens[k] in {"and", "or", "but"}), default=seg.start)
    return any(_family(tok) for tok in tokens[conjunct_start:n] + tokens[n + 1 : seg.end])


def _nearest(scrutiny: list[int], i: int, seg: _Segment | None) -> int:
    in_seg = [j for j in scrutiny if seg is not None and seg.start <= j < seg.end]
    after = [j for j in in_seg if j > i]
    return after[0] if after else min(in_seg or scrutiny, key=lambda j: abs(j - i))


def _span(tokens: list[str], i: int, j: int) -> str:
    lo, hi = min(i, j), max(i, j)
    return " ".join(tokens[lo : hi + 1]) if hi - lo <= 8 else f"{tokens[lo]} ... {tokens[hi]}"


def find_suppression(text: str) -> SuppressionMatch | None:
    """The first suppression pattern in `text`, or None if the text may only add scrutiny.

    Pure and deterministic. A text that never mentions a scrutiny word cannot suppress one and is
    always admitted; any other text is refused on the earliest word that could reduce scrutiny and is
    not inside one of the scrutiny-adding shapes in the module docstring.
    """
    tokens = _canonical_tokens(text)
    scrutiny = [i for i, tok in enumerate(tokens) if _family(tok)]
    if not scrutiny:
        return None
    segments = _segments(tokens)
    segment_of = {i: seg for seg in segments for i in range(seg.start, seg.end)}
    suppressors = _suppressors(tokens, segment_of)
    consumed: set[int] = set()
    found: list[tuple[int, SuppressionMatch]] = []

    def refuse(i: int, rule: str | None) -> None:
        j = _nearest(scrutiny, i, segment_of.get(i))
        name = rule or lexicon.RULE_BY_FAMILY[_family(tokens[j]) or "screening"]
        found.append((i, SuppressionMatch(name, _span(tokens, i, j))))

    for i, rule in suppressors.items():
        prohibitor = _governing_prohibitor(tokens, i, suppressors)
        if prohibitor is None:
            refuse(i, rule)
        else:
            consumed.add(prohibitor)
    _consume_prohibited_absence(tokens, segments, suppressors, consumed)
    for seg in segments:
        for n in range(seg.start, seg.end):
            if tokens[n] not in _NEGATORS or n in consumed or not _negation_reaches_scrutiny(tokens, n, seg):
                continue
            nxt = _meaningful(tokens, range(n + 1, seg.end))
            prv = _meaningful(tokens, range(n - 1, seg.start - 1, -1))
            double = any(k is not None and tokens[k] in _NEGATORS for k in (nxt, prv))
            refuse(n, "ambiguous_negation" if double else None)
    for i, tok in enumerate(tokens):
        if tok in _CARVE_OUTS:
            refuse(i, "conditional_waiver")
        elif tok == "only":
            neighbours = [k for k in (i - 1, i + 1) if 0 <= k < len(tokens)]
            if any(_family(tokens[k]) for k in neighbours):
                refuse(i, "limit_scrutiny")
    return min(found, key=lambda item: item[0])[1] if found else None
