"""consolidate() and the write-back plan: merge rule, slot corrections, review, the three-row table."""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timedelta
from itertools import combinations

import pytest

from services.memory.consolidation.domain.consolidation import (
    RetireReason,
    consolidate,
    plan_write_back,
    read_snapshot,
)
from services.memory.consolidation.domain.errors import (
    WriteBackRejected,
)
from services.memory.consolidation.domain.rules import (
    SIMILARITY_THRESHOLD,
    canonical_meaning,
    head,
    jaccard,
    similar_pairs,
    tokens,
)
from services.memory.core.domain.model import MemoryStatus
from tests.harness.consolidation_store import InMemoryMemoryStore, replace_write_back, run_job
from tests.unit.consolidation_corpus import T0, contents, memory, priya_turns


def minute(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def test_restatements_merge_into_one_memory_with_all_provenance_and_higher_confidence() -> None:
    # Given three restatements of one preference, one with a synonym
    memories = [
        memory("m1", "Priya prefers async standups", at=T0),
        memory("m2", "Priya prefers asynchronous standups", at=T0 + timedelta(days=2)),
        memory("m3", "Priya prefers async standups", at=T0 + timedelta(days=6)),
    ]
    # When consolidated
    output = consolidate(memories)
    # Then one survives, keeping the oldest wording, every source event and 1-(1-0.7)^3
    (kept,) = output.memories
    assert (kept.memory_id, kept.text) == ("m1", "Priya prefers async standups")
    assert kept.source_event_ids == ("evt-m1", "evt-m2", "evt-m3")
    assert kept.confidence == pytest.approx(0.973)
    assert {(r.memory_id, r.survivor_id, r.reason) for r in output.retirements} == {
        ("m2", "m1", RetireReason.MERGED),
        ("m3", "m1", RetireReason.MERGED),
    }


def test_light_canonicalisation_merges_likes_on_weekends_with_enjoys_at_weekends() -> None:
    output = consolidate(
        [
            memory("m1", "Priya likes hiking on weekends", at=minute(0)),
            memory("m2", "Priya enjoys hiking at weekends", at=minute(1)),
        ]
    )
    assert [m.text for m in output.memories] == ["Priya likes hiking on weekends"]


def test_a_refined_restatement_keeps_the_oldest_identity_and_the_more_specific_text() -> None:
    output = consolidate(
        [
            memory("m1", "Priya's manager is Omar", at=minute(0)),
            memory("m2", "Priya's manager is Omar Haddad", at=minute(1)),
        ]
    )
    (kept,) = output.memories
    assert (kept.memory_id, kept.text) == ("m1", "Priya's manager is Omar Haddad")


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Priya works at Northwind Labs", "Priya is a senior engineer at Northwind Labs"),
        ("Priya is a senior engineer", "Priya is a senior engineer at Northwind Labs"),
        ("Priya's team ships the billing service", "Priya's team owns billing"),
        ("Priya is moving to Porto", "Priya lives in Porto"),
        (
            "Priya wants a farewell lunch with the billing team on Friday",
            "Priya wants no farewell lunch with the billing team on Friday",
        ),
        (
            "Priya is mentoring two junior engineers in the platform team",
            "Priya is mentoring three junior engineers in the platform team",
        ),
        ("Priya lives in Lisbon", "Priya's sister lives in Lisbon"),
    ],
)
def test_related_but_distinct_facts_are_not_merged(older: str, newer: str) -> None:
    # Given two sentences that share most words but not one fact (precision first)
    memories = [memory("m1", older, at=minute(0)), memory("m2", newer, at=minute(1))]
    # When consolidated, then both stay, unchanged
    assert consolidate(memories).memories == tuple(memories)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Priya works at Northwind Labs", "Priya works at Calico Systems"),
        ("Priya works at Northwind Labs", "Priya is leaving Northwind Labs"),
        ("Priya is a senior engineer", "Priya is a staff engineer"),
        ("Priya is a senior engineer at Northwind Labs", "Priya is a staff engineer"),
        ("Priya is a senior engineer at Northwind Labs", "Priya is leaving Northwind Labs"),
        ("Priya lives in Lisbon", "Priya lives in Porto"),
        ("Priya's manager is Omar Haddad", "Priya's new manager at Calico is Dana"),
        ("Priya is leaving Northwind Labs", "Priya works at Northwind Labs"),
    ],
)
def test_a_newer_fact_of_the_same_slot_retires_the_older_one(older: str, newer: str) -> None:
    output = consolidate([memory("m1", older, at=minute(0)), memory("m2", newer, at=minute(1))])
    assert [m.memory_id for m in output.memories] == ["m2"]
    (retirement,) = output.retirements
    assert (retirement.memory_id, retirement.survivor_id, retirement.reason) == ("m1", "m2", RetireReason.CORRECTED)


def test_newer_wins_by_when_it_was_stated_not_when_it_was_learned() -> None:
    # Given Porto stated at minute 5 but learned first, and Lisbon stated at minute 1 but learned later
    porto = dataclasses.replace(memory("m-porto", "Priya lives in Porto", at=minute(10)), observed_at=minute(5))
    lisbon = dataclasses.replace(memory("m-lisbon", "Priya lives in Lisbon", at=minute(20)), observed_at=minute(1))
    # When consolidation runs
    output = consolidate([porto, lisbon])
    # Then the owner's latest statement (Porto) survives and the earlier one is retired
    assert [m.memory_id for m in output.memories] == ["m-porto"]
    (retirement,) = output.retirements
    assert (retirement.memory_id, retirement.survivor_id) == ("m-lisbon", "m-porto")


@pytest.mark.parametrize(
    ("current", "plan"),
    [
        ("Priya lives in Lisbon", "Priya is moving to Porto"),
        ("Priya works at Northwind Labs", "Priya is starting at Calico Systems in January as a staff engineer"),
        ("Priya is a senior engineer", "Priya is starting at Calico Systems in January as a staff engineer"),
    ],
)
def test_an_announced_plan_does_not_retire_the_present_fact(current: str, plan: str) -> None:
    output = consolidate([memory("m1", current, at=minute(0)), memory("m2", plan, at=minute(1))])
    assert [m.memory_id for m in output.memories] == ["m1", "m2"]


def test_the_correction_points_at_the_live_survivor_even_through_a_chain() -> None:
    # Given Lisbon, then Porto, then Madrid
    output = consolidate(
        [
            memory("m1", "Priya lives in Lisbon", at=minute(0)),
            memory("m2", "Priya lives in Porto", at=minute(1)),
            memory("m3", "Priya lives in Madrid", at=minute(2)),
        ]
    )
    # Then both older ones are superseded by the one that stays live
    assert [m.memory_id for m in output.memories] == ["m3"]
    assert {r.memory_id: r.survivor_id for r in output.retirements} == {"m1": "m3", "m2": "m3"}


def test_a_contradiction_without_order_goes_to_review_and_both_stay() -> None:
    # Given two cities stated at the same instant, and an older one
    memories = [
        memory("m0", "Priya lives in Madrid", at=minute(0)),
        memory("m1", "Priya lives in Lisbon", at=minute(5)),
        memory("m2", "Priya lives in Porto", at=minute(5)),
    ]
    # When consolidated
    output = consolidate(memories)
    # Then neither tied fact is decided; the older one is still corrected
    assert [m.memory_id for m in output.memories] == ["m1", "m2"]
    assert [(c.slot, c.memory_ids) for c in output.to_review] == [("priya/city", ("m1", "m2"))]
    assert [r.memory_id for r in output.retirements] == ["m0"]


def test_consolidate_is_deterministic_under_shuffled_input() -> None:
    turns = priya_turns()
    expected = consolidate(turns)
    for seed in range(20):
        shuffled = turns[:]
        random.Random(seed).shuffle(shuffled)
        assert consolidate(shuffled) == expected


@pytest.mark.parametrize("seed", range(40))
def test_consolidate_is_idempotent_on_its_applied_output(seed: int) -> None:
    # Given a random part of the corpus at shuffled instants, some of them equal
    rng = random.Random(seed)
    picked = rng.sample(priya_turns(), rng.randint(5, 34))
    store = InMemoryMemoryStore(
        dataclasses.replace(m, created_at=T0 + timedelta(minutes=rng.randint(0, 12))) for m in picked
    )
    # When the job runs twice
    run_job(store, now=T0)
    before = contents(store)
    second = run_job(store, now=T0)
    # Then the second changes nothing
    assert second is not None
    assert (second.retired, len(second.new_versions), second.kept) == (0, 0, len(store.all_active()))
    assert contents(store) == before


def test_similar_pairs_finds_exactly_what_the_quadratic_comparison_finds() -> None:
    # Given every corpus sentence and one-word variants of each (the near-misses blocking must not lose)
    texts = {canonical_meaning(m.text) for m in priya_turns()}
    rng = random.Random(3)
    for text in sorted(texts):
        words = text.split()
        for extra in ("daily", "really", "new"):
            texts.add(" ".join([*words[:2], *words[2:][: rng.randint(0, 4)], extra, *words[2:][4:]]))
    keyed = [(head(tokens(t)), frozenset(tokens(t))) for t in sorted(texts)]
    # When pairs are found with prefix and positional filtering
    found = similar_pairs(keyed)
    # Then they are exactly the pairs a full comparison finds
    expected = {
        (i, j)
        for i, j in combinations(range(len(keyed)), 2)
        if keyed[i][0] == keyed[j][0] and jaccard(keyed[i][1], keyed[j][1]) >= SIMILARITY_THRESHOLD - 1e-9
    }
    assert found == expected and found


def test_write_back_follows_the_three_row_table() -> None:
    # Given a snapshot of three memories (a duplicate pair and a lone fact) and one that arrives later
    first, duplicate, lone = (
        memory("m1", "Priya is learning Rust", at=minute(0)),
        memory("m2", "Priya is learning Rust", at=minute(1)),
        memory("m3", "Priya takes Fridays off in August", at=minute(2)),
    )
    store = InMemoryMemoryStore([first, duplicate, lone])
    snapshot = read_snapshot(store.all_active())
    late = memory("m4", "Priya dislikes Monday meetings", at=minute(3))
    store.add(late)
    # When the job's output is planned against the store as it is now, and applied
    plan = plan_write_back(snapshot, consolidate(snapshot.memories), store.active_ids(), job_id="job-1")
    store.apply(plan, now=T0)
    # Then: in snapshot and output -> the job's version (a new record for m1, m3 untouched as identical);
    # in snapshot, absent -> retired with lineage; not in snapshot -> untouched
    (new_version,) = plan.new_versions
    assert (plan.kept, plan.retired, plan.untouched) == (2, 1, 1)
    assert plan.unchanged_ids == ("m3",) and plan.untouched_ids == ("m4",)
    assert new_version.supersedes == "m1" and new_version.record.event_id == "job-1"
    assert store.get("m1").superseded_by == new_version.record.memory_id
    assert store.get("m2").superseded_by == new_version.record.memory_id
    assert store.get(new_version.record.memory_id).source_event_ids == ("evt-m1", "evt-m2")
    assert {r.memory_id for r in store.all_active()} == {new_version.record.memory_id, "m3", "m4"}


def test_write_back_refuses_an_output_that_speaks_about_ids_it_did_not_read() -> None:
    snapshot = read_snapshot([memory("m1", "Priya is learning Rust")])
    foreign = consolidate([memory("m9", "Priya is learning Rust")])
    with pytest.raises(WriteBackRejected):
        plan_write_back(snapshot, foreign, frozenset({"m1", "m9"}))


def test_a_record_retired_mid_job_is_deferred_not_resurrected() -> None:
    # Given a job that read two restatements, one of which the owner then asks to forget
    store = InMemoryMemoryStore(
        [memory("m1", "Priya lives in Lisbon", at=minute(0)), memory("m2", "Priya lives in Lisbon", at=minute(1))]
    )
    snapshot = read_snapshot(store.all_active())
    output = consolidate(snapshot.memories)
    store.deprecate("m2", now=T0)
    # When the write-back is planned and applied
    plan = plan_write_back(snapshot, output, store.active_ids())
    store.apply(plan, now=T0)
    # Then the merge is left for the next run: m2's evidence is not carried into a new version
    assert plan.new_versions == () and plan.retirements == () and plan.deferred_ids == ("m1", "m2")
    assert [r.memory_id for r in store.all_active()] == ["m1"]
    assert store.get("m2").status is MemoryStatus.DEPRECATED


def test_a_record_superseded_by_intent_mid_job_is_not_retired_again() -> None:
    # Given a job that will retire Lisbon for Porto, and a turn that supersedes Lisbon by intent first
    store = InMemoryMemoryStore(
        [
            memory("m1", "Priya lives in Lisbon", intent_key="city", at=minute(0)),
            memory("m2", "Priya lives in Porto", at=minute(1)),
        ]
    )
    snapshot = read_snapshot(store.all_active())
    output = consolidate(snapshot.memories)
    store.add(memory("m3", "Priya lives in Madrid", intent_key="city", at=minute(2)))
    # When the write-back is planned and applied
    plan = plan_write_back(snapshot, output, store.active_ids())
    store.apply(plan, now=T0)
    # Then the turn's supersession stands and the job's stale opinion about m1 is dropped
    assert plan.retirements == () and plan.deferred_ids == ("m1",) and plan.untouched_ids == ("m3",)
    assert store.get("m1").superseded_by == "m3"
    assert {r.memory_id for r in store.all_active()} == {"m2", "m3"}


def test_replace_write_back_destroys_a_memory_that_arrived_after_the_read() -> None:
    # Given a job that read one memory, and a turn landing while it computes
    store = InMemoryMemoryStore([memory("m1", "Priya is learning Rust")])
    snapshot = read_snapshot(store.all_active())
    output = consolidate(snapshot.memories)
    store.add(memory("m2", "Priya works at Calico Systems"))
    # When the naive baseline writes back
    store.replace(replace_write_back(output))
    # Then the turn is gone, with no trace and no error
    assert [r.memory_id for r in store.all_records()] == ["m1"]
