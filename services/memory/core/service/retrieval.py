"""Retrieval and conflict lookup over the vector indexes, always confirmed against the database.

The indexes may lag a commit by a moment (another replica wrote, the notice is in flight), so a
hit is only returned after the database says it is still active and belongs to the caller's
tenant and user: a superseded, deprecated or deleted record is never returned, even between
index updates. The cache holds only index hits (ids and scores), never records, for the same
reason, and is dropped on every write that affects its (tenant, user).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from services.common.vocabulary import Candidate, MemoryType
from services.memory.core.domain.model import MemoryRecord
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.ports import Vector


@dataclass(frozen=True)
class SearchMemories:
    tenant: str
    user: str
    query: str
    k: int
    types: frozenset[MemoryType]


@dataclass(frozen=True)
class ScoredMemory:
    memory: MemoryRecord
    score: float


def search_memories(cmd: SearchMemories, ports: MemoryPorts) -> list[ScoredMemory]:
    """The k most similar active memories of the tenant's user, best first (one database read,
    two only when refuted hits leave fewer than k)."""
    started = time.perf_counter()
    key = ("search", cmd.tenant, cmd.user, cmd.query, cmd.k, tuple(sorted(cmd.types)))
    hits = ports.cache.get(key)
    cache_hit = hits is not None
    if hits is None:
        stamp = ports.cache.stamp(cmd.tenant, cmd.user)  # before the index is read: see the cache's rule
        query = ports.embedder.embed([cmd.query], kind="query")[0]
        hits, confirmed = _search(cmd, query, ports)
        ports.cache.put(key, cmd.tenant, cmd.user, hits, stamp=stamp)
    else:
        confirmed = _confirm(cmd.tenant, cmd.user, hits, cmd.types, ports, first=cmd.k)
    results = confirmed[: cmd.k]
    ports.metrics.retrieval_observed(time.perf_counter() - started, cache_hit)
    return results


def _search(
    cmd: SearchMemories, query: Vector, ports: MemoryPorts
) -> tuple[list[tuple[int, float]], list[ScoredMemory]]:
    """Over-fetch so that hits the database refutes still leave k; widen once if they did not.
    Returns the index hits (what the cache keeps) and those the database confirmed."""
    fetch = cmd.k * ports.tuning.search_overfetch
    hits = ports.index.search(cmd.tenant, cmd.user, query, fetch, cmd.types)
    confirmed = _confirm(cmd.tenant, cmd.user, hits, cmd.types, ports, first=cmd.k)
    if len(hits) == fetch and len(confirmed) < cmd.k:
        hits = ports.index.search(cmd.tenant, cmd.user, query, fetch * 8, cmd.types)
        confirmed = _confirm(cmd.tenant, cmd.user, hits, cmd.types, ports, first=cmd.k)
    return hits, confirmed


def _confirm(
    tenant: str,
    user: str,
    hits: list[tuple[int, float]],
    types: frozenset[MemoryType],
    ports: MemoryPorts,
    first: int | None = None,
) -> list[ScoredMemory]:
    """The hits the database says are active records of this tenant's user, of `types` if any, in
    hit order; only the first `first` of them are read (the over-fetched rest cost a read each)."""
    if not hits:
        return []
    rows = ports.active.active_by_row_ids(tenant, user, [row_id for row_id, _ in hits], types=types, first=first)
    live = {r.row_id: r for r in rows}
    return [ScoredMemory(live[row_id], score) for row_id, score in hits if row_id in live]


def find_conflicts(
    tenant: str, user: str, candidates: list[Candidate], ports: MemoryPorts
) -> list[tuple[str, list[MemoryRecord]]]:
    """For each candidate, the active records it may contradict, in request order.

    A conflict is an active record of the same intent key, or of the same type whose similarity
    reaches the calibrated threshold. The same meaning (same candidate key) is a repeat, not a
    conflict, and is left out. One user's `find_conflicts_many`.
    """
    return find_conflicts_many(tenant, [(user, candidates)], ports)[0]


def find_conflicts_many(
    tenant: str, requests: Sequence[tuple[str, list[Candidate]]], ports: MemoryPorts
) -> list[list[tuple[str, list[MemoryRecord]]]]:
    """`find_conflicts` of each (user, candidates) request of one tenant, in request order.

    Every candidate of every request is embedded in ONE embedder call and searched in its own
    user's partition; then ONE database read (one round trip, no unit of work) returns the active
    records of all the candidates' intents and of their hits together. A worker's batch of events
    from many users used to make one FindConflicts call (one embedding pass, one read) per user.
    Each request is answered exactly as it would be alone: records are matched to a request by
    its user, so no user's records reach another's answer.
    """
    texts = [c.text for _, candidates in requests for c in candidates]
    if not texts:
        return [[] for _ in requests]
    vectors = iter(ports.embedder.embed(texts, kind="query"))
    close_hits: list[list[list[int]]] = []
    intents: set[tuple[str, str]] = set()
    rows_wanted: set[tuple[str, int]] = set()
    for user, candidates in requests:
        per_candidate: list[list[int]] = []
        for candidate in candidates:
            hits = ports.index.search(tenant, user, next(vectors), 10, frozenset({candidate.type}))
            close = [row_id for row_id, s in hits if s >= ports.tuning.conflict_similarity]
            per_candidate.append(close)
            rows_wanted.update((user, row_id) for row_id in close)
            if candidate.intent_key:
                intents.add((user, candidate.intent_key))
        close_hits.append(per_candidate)
    rows = ports.active.active_for_conflicts(tenant, sorted(intents), sorted(rows_wanted))
    by_intent = {(r.user, r.intent_key): r for r in rows if r.intent_key}
    by_row = {(r.user, r.row_id): r for r in rows}
    answers: list[list[tuple[str, list[MemoryRecord]]]] = []
    for (user, candidates), per_candidate in zip(requests, close_hits, strict=True):
        results = []
        for candidate, close in zip(candidates, per_candidate, strict=True):
            found: dict[str, MemoryRecord] = {}
            same_intent = by_intent.get((user, candidate.intent_key)) if candidate.intent_key else None
            if same_intent is not None:
                found[same_intent.memory_id] = same_intent
            for row_id in close:  # in hit order, of the candidate's type, as the index re-check kept them
                record = by_row.get((user, row_id))
                if record is not None and record.type is candidate.type:
                    found.setdefault(record.memory_id, record)
            conflicts = [r for r in found.values() if r.candidate_key != candidate.candidate_key]
            results.append((candidate.candidate_key, conflicts))
        answers.append(results)
    return answers
