"""Deciding candidates: policy first, then memory's conflicts for what policy did not reject.

Policy's rules rank REJECT above REVIEW above STORE, and every reject rule reads the candidate
alone, never its conflicts (pinned by `tests/unit/test_policy_rules.py`). So a candidate put to
policy without conflicts and rejected is rejected whatever memory would have found, and a
candidate for which memory finds no conflicts has already had exactly the decision it would get.
Hence three calls, each over the whole batch of one tenant:

1. policy, every candidate with no conflicts;
2. memory's FindConflicts, only the candidates policy did not reject;
3. policy again, only the candidates memory found conflicts for (often none, then no call).

Why not conflicts first, as before: memory embeds every text it is asked about, and with a sentence
model that is most of its CPU. Rejected candidates (an attacker's instruction, a secret) were a
quarter of the texts memory embedded and never stored. Now attacker-written text never reaches
memory's embedder or its conflict lookup at all; the rejection still reaches memory in
ApplyLearning, as a signed decision for the audit trail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.common.vocabulary import Candidate, Decision, Outcome
from services.worker.service.model import Evaluation
from services.worker.service.ports import ConflictFinder, PolicyGate


@dataclass(frozen=True)
class Proposal:
    """One candidate of one event, with the event's scope policy signs it for."""

    candidate: Candidate
    user: str
    route: str


async def decide(
    tenant: str, proposals: Sequence[Proposal], *, policy: PolicyGate, conflicts: ConflictFinder
) -> list[Decision]:
    """Policy's decision on every proposal, in order, each made with the conflicts memory finds for it.

    Raises what a peer call raises, for the call as a whole (nothing is written here).
    """
    if not proposals:
        return []
    decisions = list(
        await policy.evaluate_many(
            [Evaluation(p.candidate, (), user=p.user, route=p.route) for p in proposals], tenant=tenant
        )
    )
    open_ = [i for i, decision in enumerate(decisions) if decision.outcome is not Outcome.REJECT]
    if not open_:
        return decisions
    users: dict[str, list[int]] = {}
    for i in open_:
        users.setdefault(proposals[i].user, []).append(i)
    found = await conflicts.find_many(
        tenant, [(user, [proposals[i].candidate for i in indexes]) for user, indexes in users.items()]
    )
    recheck: list[Evaluation] = []
    where: list[int] = []
    for indexes, by_key in zip(users.values(), found, strict=True):
        for i in indexes:
            records = tuple(by_key.get(proposals[i].candidate.candidate_key, ()))
            if records:
                proposal = proposals[i]
                recheck.append(Evaluation(proposal.candidate, records, user=proposal.user, route=proposal.route))
                where.append(i)
    if recheck:
        for i, decision in zip(where, await policy.evaluate_many(recheck, tenant=tenant), strict=True):
            decisions[i] = decision
    return decisions
