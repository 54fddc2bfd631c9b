"""Consolidation of one user's memories, and the race-safe write-back of its result.

`consolidate` is a pure function of the active memories it is given: it merges restatements of
one fact, retires facts a newer fact of the same slot corrects, and lists the contradictions it
will not decide. It is deterministic (input order does not matter) and idempotent (run on its own
applied output it changes nothing), which is what makes a crashed job safe to simply run again.

The job around it follows the seed "Background Job Mechanics": read a `Snapshot` that records the
id set it saw, compute, then `plan_write_back` by merge — in snapshot and output: the job's
version; in snapshot, absent from output: retired deliberately, with lineage; not in snapshot:
untouched. The naive baseline that reads every absence as a deletion (`replace_write_back`) is a
test and benchmark harness, in `tests/harness/consolidation_store.py`: it exists only to be
measured against, so it does not ship.

Merge rule (restatements): same tenant, user, type and intent key, and one of
  - equal canonical meaning (`normalise_meaning` plus the light rewrites of `consolidation_rules`),
  - the same slot claims (e.g. manager, CURRENT) with values one refining the other
    ("Omar" / "Omar Haddad"),
  - token-set similarity >= `consolidation_rules.SIMILARITY_THRESHOLD` (0.8, justified there)
    with the same head, no negation or number among the differing words and no conflicting slot
    claim.
No embeddings: the domain stays standard-library, and the rules above are exact on the wordings
the extractor produces; an embedding threshold would be a calibration the domain cannot own.
Candidate pairs are only generated inside blocks (same canonical key, same slot signature, or a
shared rare token under prefix filtering), so the job is near-linear, not O(n^2).

Survivor: the lineage anchor is the best-supported member (most distinct source events, then the
oldest) so identity is stable across runs; its text is the most specific member's (most canonical
tokens, ties keep the oldest wording) so "Omar Haddad" refines "Omar" but synonyms never churn
versions. Confidence is noisy-OR over members that bring new source events — 1-(1-c)^n for equal
c — capped at 0.99 and never below the best member's.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from services.memory.consolidation.domain.errors import WriteBackRejected
from services.memory.consolidation.domain.rules import (
    SlotClaim,
    canonical_meaning,
    claim_sets_compatible,
    combined_confidence,
    differing_words_are_harmless,
    head,
    resolve_slots,
    similar_pairs,
    slot_claims,
    tokens,
    values_compatible,
)
from services.memory.core.domain.model import MemoryRecord, MemoryStatus

_VERSION_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "memloop/consolidation/version")


class RetireReason(StrEnum):
    MERGED = "merged"
    CORRECTED = "corrected"


@dataclass(frozen=True)
class Retirement:
    """`memory_id` is absent from the output because `survivor_id` (a kept id) replaces it."""

    memory_id: str
    survivor_id: str
    reason: RetireReason


@dataclass(frozen=True)
class Contradiction:
    """Live memories that set one slot differently with no order between them: for a reviewer."""

    slot: str
    memory_ids: tuple[str, ...]


@dataclass(frozen=True)
class ConsolidationOutput:
    """The job's version of every kept id, why every other id is gone, and what it won't decide."""

    memories: tuple[MemoryRecord, ...]
    retirements: tuple[Retirement, ...]
    to_review: tuple[Contradiction, ...]


@dataclass(frozen=True)
class _Meaning:
    """Records sharing one canonical meaning in one block: the unit similarity is computed on."""

    block: tuple[str, str, str, str]
    canonical: str
    words: frozenset[str]
    claims: tuple[SlotClaim, ...]
    records: tuple[MemoryRecord, ...]


@dataclass(frozen=True)
class _Group:
    """One fact after merging: its anchor (kept id), its members and its job's version."""

    anchor: MemoryRecord
    members: tuple[MemoryRecord, ...]
    version: MemoryRecord
    claims: tuple[SlotClaim, ...]

    @property
    def time(self) -> datetime:
        """When the owner stated it (not when it was learned): newer-wins compares statements."""
        return self.version.stated_at


def consolidate(memories: Sequence[MemoryRecord]) -> ConsolidationOutput:
    """Merge restatements, retire corrected facts, list unresolved contradictions.

    Pure, deterministic and idempotent. Non-active records are ignored. Every input id is either
    in `memories` (kept, perhaps with new text/confidence/provenance — same id, the write-back
    turns it into a new record) or in `retirements` with the kept id that replaces it.
    """
    records = sorted((m for m in memories if m.status is MemoryStatus.ACTIVE), key=lambda m: m.memory_id)
    groups = [_build_group(members) for members in _group_restatements(_meanings(records))]
    groups.sort(key=lambda g: g.anchor.memory_id)
    resolution = resolve_slots([(g.time, g.claims) for g in groups])
    corrected_by = resolution.corrected_by
    kept: list[MemoryRecord] = []
    retirements: list[Retirement] = []
    for index, group in enumerate(groups):
        if index in corrected_by:
            survivor = groups[corrected_by[index]].anchor.memory_id
            retirements += [Retirement(m.memory_id, survivor, RetireReason.CORRECTED) for m in group.members]
            continue
        kept.append(group.version)
        retirements += [
            Retirement(m.memory_id, group.anchor.memory_id, RetireReason.MERGED)
            for m in group.members
            if m is not group.anchor
        ]
    return ConsolidationOutput(
        memories=tuple(sorted(kept, key=lambda m: m.memory_id)),
        retirements=tuple(sorted(retirements, key=lambda r: r.memory_id)),
        to_review=tuple(
            Contradiction(slot, tuple(groups[i].anchor.memory_id for i in indices)) for slot, indices in resolution.ties
        ),
    )


def _meanings(records: Sequence[MemoryRecord]) -> list[_Meaning]:
    buckets: dict[tuple[tuple[str, str, str, str], str], list[MemoryRecord]] = defaultdict(list)
    for record in records:
        block = (record.tenant, record.user, record.type.value, record.intent_key)
        buckets[(block, canonical_meaning(record.text))].append(record)
    return [
        _Meaning(block, canonical, frozenset(tokens(canonical)), slot_claims(canonical), tuple(members))
        for (block, canonical), members in sorted(buckets.items())
    ]


def _group_restatements(meanings: list[_Meaning]) -> list[tuple[MemoryRecord, ...]]:
    """Union meanings joined by a restatement edge; an edge that would join conflicting slot
    claims is skipped, so no group ever holds two values of one slot."""
    parent = list(range(len(meanings)))
    claims: dict[int, tuple[SlotClaim, ...]] = {i: m.claims for i, m in enumerate(meanings)}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for left, right in sorted(_refinement_pairs(meanings) | _similar_pairs(meanings)):
        a, b = root(left), root(right)
        if a != b and claim_sets_compatible(claims[a], claims[b]):
            parent[b] = a
            claims[a] = tuple(sorted(set(claims[a]) | set(claims.pop(b))))
    members: dict[int, list[MemoryRecord]] = defaultdict(list)
    for i, meaning in enumerate(meanings):
        members[root(i)].extend(meaning.records)
    return [tuple(group) for _, group in sorted(members.items())]


def _refinement_pairs(meanings: list[_Meaning]) -> set[tuple[int, int]]:
    """Same slot signature, values refining each other: "manager is Omar" / "... Omar Haddad"."""
    blocks: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for i, meaning in enumerate(meanings):
        if meaning.claims:
            signature = tuple((c.subject, c.slot, c.verb, c.modality, c.value[:1]) for c in meaning.claims)
            blocks[(meaning.block, signature)].append(i)
    pairs: set[tuple[int, int]] = set()
    for indices in blocks.values():
        for n, i in enumerate(indices):
            for j in indices[n + 1 :]:
                pair = zip(meanings[i].claims, meanings[j].claims, strict=True)
                if all(values_compatible(a.value, b.value) for a, b in pair):
                    pairs.add((i, j))
    return pairs


def _similar_pairs(meanings: list[_Meaning]) -> set[tuple[int, int]]:
    keyed = [((m.block, head(tokens(m.canonical))), m.words) for m in meanings]
    return {
        (i, j)
        for i, j in similar_pairs(keyed)
        if differing_words_are_harmless(meanings[i].words, meanings[j].words)
        and claim_sets_compatible(meanings[i].claims, meanings[j].claims)
    }


def _build_group(members: tuple[MemoryRecord, ...]) -> _Group:
    ordered = tuple(sorted(members, key=lambda m: (m.stated_at, m.memory_id)))
    anchor = min(ordered, key=lambda m: (-len(set(m.source_event_ids)), m.stated_at, m.memory_id))
    wording = min(ordered, key=lambda m: (-len(tokens(canonical_meaning(m.text))), m.stated_at, m.memory_id))
    if len(ordered) == 1:
        version = anchor
    else:
        version = dataclasses.replace(
            anchor,
            text=wording.text,
            candidate_key=wording.candidate_key,
            origin=wording.origin,
            trace_id=wording.trace_id,
            policy_version=wording.policy_version,
            confidence=combined_confidence(ordered),
            source_event_ids=tuple(sorted({e for m in ordered for e in m.source_event_ids})),
            created_at=max(m.created_at for m in ordered),
            updated_at=max(m.updated_at for m in ordered),
            observed_at=max(m.stated_at for m in ordered),
        )
    return _Group(anchor, ordered, version, slot_claims(canonical_meaning(version.text)))


# --- the job's mechanics ------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """What the job read: the ids it may have an opinion about, and copies of those records."""

    ids: frozenset[str]
    memories: tuple[MemoryRecord, ...]


def read_snapshot(records: Iterable[MemoryRecord]) -> Snapshot:
    """Copy the active records and record their id set (the receipt the write-back is scoped by)."""
    copies = tuple(
        sorted(
            (dataclasses.replace(r) for r in records if r.status is MemoryStatus.ACTIVE),
            key=lambda r: r.memory_id,
        )
    )
    return Snapshot(frozenset(r.memory_id for r in copies), copies)


@dataclass(frozen=True)
class NewVersion:
    """A new record replacing `supersedes` (the job changed it); the old row is never rewritten."""

    record: MemoryRecord
    supersedes: str


@dataclass(frozen=True)
class PlannedRetirement:
    """Retire `memory_id` deliberately, superseded by the live record `superseded_by`."""

    memory_id: str
    superseded_by: str
    reason: RetireReason


WriteOperation = NewVersion | PlannedRetirement


@dataclass(frozen=True)
class WriteBackPlan:
    """The write-back as operations, with the report figures.

    `deferred_ids` are read ids the job can no longer act on because they, or a member or survivor
    of their group, stopped being active after the read (superseded by a turn): the seed's table
    has no row for them, and the safe answer is to leave them for the next run.
    """

    new_versions: tuple[NewVersion, ...]
    retirements: tuple[PlannedRetirement, ...]
    unchanged_ids: tuple[str, ...]
    untouched_ids: tuple[str, ...]
    deferred_ids: tuple[str, ...]
    to_review: tuple[Contradiction, ...]

    @property
    def kept(self) -> int:
        return len(self.new_versions) + len(self.unchanged_ids)

    @property
    def retired(self) -> int:
        return len(self.retirements)

    @property
    def untouched(self) -> int:
        return len(self.untouched_ids)

    @property
    def deferred(self) -> int:
        return len(self.deferred_ids)

    @property
    def sent_to_review(self) -> int:
        return len(self.to_review)

    def operations(self) -> tuple[WriteOperation, ...]:
        """New versions first, so every retirement points at a record that already exists."""
        return (*self.new_versions, *self.retirements)


def plan_write_back(
    snapshot: Snapshot, output: ConsolidationOutput, current_ids: frozenset[str], *, job_id: str = ""
) -> WriteBackPlan:
    """Merge the output into the store as it is now (`current_ids`: its active ids).

    Pure and deterministic: new version ids derive from content, so a re-run of a crashed job plans
    the same rows; `job_id` becomes the `event_id` of every new version. Raises `WriteBackRejected`
    if the output claims ids outside the snapshot or drops one without saying what replaces it:
    the id set is the whole mechanism, so it is enforced.
    """
    by_id = {m.memory_id: m for m in snapshot.memories}
    output_ids = {m.memory_id for m in output.memories}
    retired_by = {r.memory_id: r for r in output.retirements}
    if not output_ids <= snapshot.ids or set(retired_by) | output_ids != snapshot.ids:
        raise WriteBackRejected("output must account for exactly the snapshot's ids")
    merged_into: dict[str, set[str]] = defaultdict(set)
    for r in output.retirements:
        if r.reason is RetireReason.MERGED:
            merged_into[r.survivor_id].add(r.memory_id)
    final_id: dict[str, str] = {}
    deferred: set[str] = set()
    new_versions: list[NewVersion] = []
    unchanged: list[str] = []
    for record in output.memories:
        group = {record.memory_id} | merged_into[record.memory_id]
        if not group <= current_ids:
            deferred |= group
            if record.memory_id in current_ids:
                final_id[record.memory_id] = record.memory_id
        elif record == by_id[record.memory_id]:
            unchanged.append(record.memory_id)
            final_id[record.memory_id] = record.memory_id
        else:
            new = dataclasses.replace(
                record,
                memory_id=_version_id(record),
                status=MemoryStatus.ACTIVE,
                supersedes=record.memory_id,
                superseded_by=None,
                event_id=job_id,
                row_id=0,
                change_seq=0,
            )
            new_versions.append(NewVersion(new, record.memory_id))
            final_id[record.memory_id] = new.memory_id
    retirements: list[PlannedRetirement] = []
    for r in output.retirements:
        if r.memory_id in deferred:
            continue
        if r.memory_id not in current_ids or r.survivor_id not in final_id:
            deferred.add(r.memory_id)
            continue
        retirements.append(PlannedRetirement(r.memory_id, final_id[r.survivor_id], r.reason))
    review = tuple(
        Contradiction(c.slot, tuple(sorted(final_id.get(i, i) for i in c.memory_ids))) for c in output.to_review
    )
    return WriteBackPlan(
        new_versions=tuple(new_versions),
        retirements=tuple(retirements),
        unchanged_ids=tuple(unchanged),
        untouched_ids=tuple(sorted(current_ids - snapshot.ids)),
        deferred_ids=tuple(sorted(deferred)),
        to_review=review,
    )


def _version_id(record: MemoryRecord) -> str:
    """A content-derived id (UUIDv5) for the new version of `record.memory_id`."""
    fields = (record.memory_id, record.text, f"{record.confidence:.4f}", record.created_at.isoformat())
    material = "\x1f".join((*fields, *record.source_event_ids))
    return str(uuid.uuid5(_VERSION_NAMESPACE, material))
