"""The rules consolidation applies: canonical wording, slot claims, similarity, newer-wins.

Kept apart from `consolidation.py` so the rules a reviewer argues about (which words are synonyms,
which sentences name an employer, how similar is "the same", which claim corrects which) sit in one
module, and the job logic does not change when they do. Pure and standard-library only.

Everything here works on `normalise_meaning` output, then a light canonicalisation:
"asynchronous" → "async", "enjoys" → "likes", "at/on (the) weekend(s)" → "weekends", "Priya s" →
"priya's", articles and trailing full stops dropped. It is deliberately light: each rule is a
wording that means the same thing in every sentence it can appear in, so it can only create true
restatements, never merge two facts.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import lru_cache
from itertools import groupby

from services.common.vocabulary import normalise_meaning
from services.memory.core.domain.model import MemoryRecord

# Token-set (Jaccard) similarity at or above which two sentences with the same head are one fact.
# Why 0.8: one added word merges only when the shorter sentence has >= 4 tokens (4/5) and a
# substituted word only at >= 9 tokens (8/10), and every merge also needs the same head (subject
# and first predicate word), no negation or number among the differing words and no conflicting
# slot claim. On the Priya corpus the closest pair that is NOT a restatement scores 0.64 ("is a
# staff engineer at Calico Systems" / "is starting at Calico Systems ... as a staff engineer"),
# then 0.6 (Lisbon / Porto); the closest restatement scores 0.8 ("manager is Omar" / "... Omar
# Haddad", also caught by the slot rule). Outside the slots the rule catches one-word refinements
# of longer sentences ("prefers daily async standups"). Precision first: a missed merge leaves a
# harmless duplicate live; a false merge retires a true fact.
SIMILARITY_THRESHOLD = 0.8
CONFIDENCE_CAP = 0.99
_EPSILON = 1e-9

_CANONICAL_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\.(?=\s|$)"), " "),
    (re.compile(r"\b(\w+) s\b"), r"\1's"),
    (re.compile(r"\b(?:at|on|over|during) (?:the )?weekends?\b"), "weekends"),
    (re.compile(r"\bweekend\b"), "weekends"),
    (re.compile(r"\basynchronous\b"), "async"),
    (re.compile(r"\bsynchronous\b"), "sync"),
    (re.compile(r"\benjoys\b"), "likes"),
    (re.compile(r"\benjoy\b"), "like"),
    (re.compile(r"\b(?:a|an|the)\b"), " "),
)
_SPACES = re.compile(r"\s+")

# Words whose presence on one side only flips or quantifies a sentence: never merge across them
# ("doesn't" normalises to "doesn t", hence the lone "t").
_GUARD_WORDS = frozenset(
    {"not", "no", "never", "nor", "t", "dislikes", "dislike", "hates", "hate", "stopped", "quit"}
    | {"leaving", "left", "former", "ex", "formerly"}
    | {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
)
_DIGITS = re.compile(r"\d")


@lru_cache(maxsize=1 << 16)
def canonical_meaning(text: str) -> str:
    """The wording two restatements of one fact share; equal canonical meanings are merged."""
    canonical = normalise_meaning(text)
    for pattern, replacement in _CANONICAL_REWRITES:
        canonical = pattern.sub(replacement, canonical)
    return _SPACES.sub(" ", canonical).strip()


def tokens(canonical: str) -> tuple[str, ...]:
    return tuple(canonical.split())


def head(canonical_tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Subject and first predicate word: "priya's team", "priya likes". Merges never cross heads,
    which keeps "Priya's sister lives in Lisbon" away from "Priya lives in Lisbon"."""
    return canonical_tokens[:2]


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    return len(left & right) / len(left | right) if left or right else 1.0


def differing_words_are_harmless(left: frozenset[str], right: frozenset[str]) -> bool:
    """False when the words on one side only include a negation or a number ("two" vs "three")."""
    return not any(word in _GUARD_WORDS or _DIGITS.search(word) for word in left ^ right)


class Modality(StrEnum):
    """How a sentence bears on a slot.

    CURRENT states the value now ("works at X"). PROSPECTIVE announces a plan ("is moving to Y",
    "is starting at Y"): precision first, a plan does not retire the present fact, so "moving to
    Porto" leaves "lives in Lisbon" live until "lives in Porto" arrives. DENY withdraws a value
    ("is leaving X"): it retires the matching CURRENT fact at once.
    """

    CURRENT = "current"
    PROSPECTIVE = "prospective"
    DENY = "deny"


@dataclass(frozen=True, order=True)
class SlotClaim:
    """One single-valued attribute a sentence sets, e.g. (priya, city, lives, CURRENT, lisbon)."""

    subject: str
    slot: str
    verb: str
    modality: Modality
    value: tuple[str, ...]

    @property
    def slot_key(self) -> tuple[str, str]:
        return (self.subject, self.slot)


def values_compatible(left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """Same value, possibly refined: one is a token prefix of the other ("omar" / "omar haddad")."""
    shorter, longer = sorted((left, right), key=len)
    return longer[: len(shorter)] == shorter


def claims_conflict(older: SlotClaim, newer: SlotClaim) -> bool:
    """True when `newer` makes `older` false. Order matters: only the older claim is corrected."""
    if older.slot_key != newer.slot_key:
        return False
    same = values_compatible(older.value, newer.value)
    if newer.modality is Modality.DENY:
        return same and older.modality is not Modality.DENY
    if older.modality is Modality.DENY:
        return same and newer.modality is Modality.CURRENT
    if older.modality is Modality.PROSPECTIVE and newer.modality is Modality.CURRENT:
        return False
    if older.modality is Modality.CURRENT and newer.modality is Modality.PROSPECTIVE:
        return False
    return not same


def claim_sets_compatible(left: tuple[SlotClaim, ...], right: tuple[SlotClaim, ...]) -> bool:
    return not any(claims_conflict(a, b) or claims_conflict(b, a) for a in left for b in right)


_ROLE = (
    r"(?P<role>(?:(?![a-z]+ing\b)[a-z]+ ){0,3}"
    r"(?:engineer|developer|manager|designer|scientist|analyst|architect|lead|director|researcher"
    r"|intern|consultant|cto|ceo|vp))"
)
_S = r"(?P<subject>\w+)"
_QUALIFIER = r"(?: (?:in|on|from|next|this) [a-z0-9]+)?"

# (slot, verb, modality, pattern). The first pattern that matches a sentence gives its claims; a
# pattern with both `value` and `role` groups sets employer and role (the "senior engineer at
# Northwind Labs" case relates to both).
_SLOT_PATTERNS: tuple[tuple[str, str, Modality, re.Pattern[str]], ...] = tuple(
    (slot, verb, modality, re.compile(pattern))
    for slot, verb, modality, pattern in (
        ("employer", "leaving", Modality.DENY, rf"^{_S} (?:is leaving|has left|left|quit) (?P<value>.+)$"),
        (
            "employer",
            "starting",
            Modality.PROSPECTIVE,
            rf"^{_S} is (?:starting|joining) (?:at )?(?P<value>.+?){_QUALIFIER}(?: as {_ROLE})?$",
        ),
        ("employer", "works", Modality.CURRENT, rf"^{_S} (?:works|is working) (?:at|for) (?P<value>.+)$"),
        ("employer", "joined", Modality.CURRENT, rf"^{_S} (?:has )?joined (?P<value>.+)$"),
        ("employer", "is_at", Modality.CURRENT, rf"^{_S} is {_ROLE} (?:at|with) (?P<value>.+)$"),
        ("role", "is", Modality.CURRENT, rf"^{_S} is {_ROLE}$"),
        ("city", "lives", Modality.CURRENT, rf"^{_S} (?:lives|is living|is based|resides) in (?P<value>.+)$"),
        ("city", "moved", Modality.CURRENT, rf"^{_S} (?:has )?moved to (?P<value>.+)$"),
        (
            "city",
            "moving",
            Modality.PROSPECTIVE,
            rf"^{_S} is (?:moving|relocating) to (?P<value>.+?){_QUALIFIER}$",
        ),
        (
            "manager",
            "manager",
            Modality.CURRENT,
            rf"^{_S}'s (?:new |current )?manager(?: at .+?)? is (?P<value>.+)$",
        ),
        ("manager", "reports", Modality.CURRENT, rf"^{_S} reports to (?P<value>.+)$"),
    )
)


@lru_cache(maxsize=1 << 16)
def slot_claims(canonical: str) -> tuple[SlotClaim, ...]:
    """The slot claims a canonical sentence makes, sorted; empty for sentences outside the slots."""
    for slot, verb, modality, pattern in _SLOT_PATTERNS:
        match = pattern.match(canonical)
        if match is None:
            continue
        subject = match["subject"]
        groups = match.groupdict()
        claims: list[SlotClaim] = []
        if slot != "role" and groups.get("value"):
            claims.append(SlotClaim(subject, slot, verb, modality, tokens(groups["value"])))
        if groups.get("role"):
            claims.append(SlotClaim(subject, "role", verb, modality, tokens(groups["role"])))
        return tuple(sorted(claims))
    return ()


def similar_pairs(word_sets: Sequence[tuple[Hashable, frozenset[str]]]) -> set[tuple[int, int]]:
    """Index pairs (i < j) in the same block with Jaccard >= `SIMILARITY_THRESHOLD`. Exact.

    PPJoin (prefix plus positional filtering): sets are visited by increasing size with their words
    ordered rarest first. Two sets with Jaccard >= t must share a word early in both orderings, so
    only short prefixes are indexed and probed; and a shared word at positions (p, q) leaves at most
    1 + min(|x|-p-1, |y|-q-1) further overlap, so a pair that can no longer reach the overlap
    Jaccard t needs is dropped before it is ever verified. That second filter is what keeps
    families of one-word variants ("... at Vendor5 Systems" / "... at Vendor6 Systems", Jaccard
    0.75) from turning the job quadratic.
    """
    t = SIMILARITY_THRESHOLD
    frequency = Counter(word for _, words in word_sets for word in words)
    index: dict[tuple[Hashable, str], list[tuple[int, int]]] = defaultdict(list)
    pairs: set[tuple[int, int]] = set()
    for i in sorted(range(len(word_sets)), key=lambda k: (len(word_sets[k][1]), k)):
        block, words = word_sets[i]
        size = len(words)
        ordered = sorted(words, key=lambda word: (frequency[word], word))
        overlap: dict[int, int] = {}
        for position, word in enumerate(ordered[: size - math.ceil(t * size - _EPSILON) + 1]):
            for j, other_position in index[(block, word)]:
                other = len(word_sets[j][1])
                if other < t * size - _EPSILON or overlap.get(j, 0) < 0:
                    continue
                needed = math.ceil(t / (1 + t) * (size + other) - _EPSILON)
                reachable = overlap.get(j, 0) + 1 + min(size - position - 1, other - other_position - 1)
                overlap[j] = overlap.get(j, 0) + 1 if reachable >= needed else -1
        for position, word in enumerate(ordered[: size - math.ceil(2 * t / (1 + t) * size - _EPSILON) + 1]):
            index[(block, word)].append((i, position))
        pairs |= {
            (min(i, j), max(i, j))
            for j, count in overlap.items()
            if count > 0 and jaccard(words, word_sets[j][1]) >= t - _EPSILON
        }
    return pairs


@dataclass(frozen=True)
class SlotResolution:
    """`corrected_by[i]`: the kept fact replacing fact i; `ties`: (slot, facts) left undecided."""

    corrected_by: dict[int, int]
    ties: tuple[tuple[str, tuple[int, ...]], ...]


_Entry = tuple[tuple[datetime, int], SlotClaim]


def resolve_slots(facts: Sequence[tuple[datetime, tuple[SlotClaim, ...]]]) -> SlotResolution:
    """Newer wins per slot; conflicting claims at the same instant are ties, not decisions.

    A fact is corrected when a strictly newer fact's claim conflicts with one of its claims; it is
    replaced by the newest such fact, or by whatever replaces that one in turn, so the survivor is
    always kept. A tie is reported only among facts nothing newer corrects. Deterministic: equal
    instants break by index.
    """
    by_slot: dict[tuple[str, str], list[tuple[datetime, int, SlotClaim]]] = defaultdict(list)
    for index, (time, claims) in enumerate(facts):
        for claim in claims:
            by_slot[claim.slot_key].append((time, index, claim))
    newest_conflict: dict[int, tuple[datetime, int]] = {}
    ties: dict[tuple[str, datetime], set[int]] = defaultdict(set)
    for slot_key, items in sorted(by_slot.items()):
        # Newest first, equal instants lowest index first: the first conflict a history list
        # yields is the newest one, and ties break the same way on every run.
        items.sort(key=lambda item: (item[0], -item[1]), reverse=True)
        history: dict[tuple[Modality, str], list[_Entry]] = defaultdict(list)
        for time, bucket_items in groupby(items, key=lambda item: item[0]):
            bucket = list(bucket_items)
            for _, index, claim in bucket:
                for key, _claim in _newer_conflicts(claim, history):
                    newest_conflict[index] = max(key, newest_conflict.get(index, key))
                for _, other, other_claim in bucket:
                    if other != index and claims_conflict(claim, other_claim):
                        ties[("/".join(slot_key), time)] |= {index, other}
            for _, index, claim in bucket:
                history[(claim.modality, "")].append(((time, -index), claim))
                history[(claim.modality, claim.value[0])].append(((time, -index), claim))
    corrected_by: dict[int, int] = {}
    for index in sorted(newest_conflict, key=lambda i: facts[i][0], reverse=True):
        target = -newest_conflict[index][1]
        corrected_by[index] = corrected_by.get(target, target)
    undecided = []
    for (slot, _), indices in sorted(ties.items()):
        live = tuple(sorted(i for i in indices if i not in corrected_by))
        if len(live) > 1:
            undecided.append((slot, live))
    return SlotResolution(corrected_by, tuple(undecided))


def _newer_conflicts(claim: SlotClaim, history: dict[tuple[Modality, str], list[_Entry]]) -> list[_Entry]:
    """The newest strictly-newer claim of each kind that corrects `claim`.

    Only the lists a conflict can be in are searched (see `claims_conflict`): any claim of the same
    modality, and a DENY (or, for a DENY, a CURRENT) starting with the same word. Each list is
    newest first, so a search stops at its first conflict.
    """
    other = Modality.CURRENT if claim.modality is Modality.DENY else Modality.DENY
    found = []
    for entries in (history[(claim.modality, "")], history[(other, claim.value[0])]):
        hit = next((entry for entry in entries if claims_conflict(claim, entry[1])), None)
        if hit is not None:
            found.append(hit)
    return found


def combined_confidence(ordered: Sequence[MemoryRecord]) -> float:
    """Noisy-OR over restatements (oldest first) that bring at least one new source event, capped
    at `CONFIDENCE_CAP` and never below the best one's: 1-(1-c)^n for n independent sightings of
    confidence c, so repetition raises confidence while re-reading one event does not. A record
    with no source events counts as its own sighting. Associative up to rounding, so merging a
    survivor with a later restatement gives what merging everything at once would."""
    seen: set[str] = set()
    doubt = 1.0
    for member in ordered:
        fresh = set(member.source_event_ids) - seen
        if fresh or not member.source_event_ids:
            doubt *= 1.0 - member.confidence
        seen |= fresh
    best = max(m.confidence for m in ordered)
    return max(round(min(1.0 - doubt, CONFIDENCE_CAP), 4), best)
