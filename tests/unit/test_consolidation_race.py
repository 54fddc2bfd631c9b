"""The job raced against a live conversation: the merge write-back loses nothing, replace does.

Each turn of the Priya conversation (one memory per turn) lands at every position of the job the
previous turn triggered: before the read, after the read, during the compute, and before each
write-back operation (`race_every_position`). The raced store must equal the serialised run —
turn then job if it landed before the read, job then turn otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.common.vocabulary import normalise_meaning
from services.memory.core.domain.model import MemoryRecord
from tests.harness.consolidation_store import (
    InMemoryMemoryStore,
    JobPhase,
    RaceCase,
    WriteBackMode,
    race_every_position,
    run_job,
)
from tests.unit.consolidation_corpus import contents, ends_live, fixture, live_meanings, priya_turns, session_of


@pytest.fixture(scope="module")
def merge_races() -> list[RaceCase]:
    return list(race_every_position(priya_turns(), mode=WriteBackMode.MERGE))


def finish_conversation(store: InMemoryMemoryStore, after: MemoryRecord) -> InMemoryMemoryStore:
    """Play the rest of the conversation on `store` (a job after each turn, and a last one)."""
    turns = priya_turns()
    position = [t.memory_id for t in turns].index(after.memory_id)
    for turn in turns[position + 1 :]:
        run_job(store, now=turn.created_at)
        store.add(turn)
    run_job(store, now=turns[-1].created_at)
    return store


def serialised_conversation(until_session: int | None = None) -> InMemoryMemoryStore:
    store = InMemoryMemoryStore()
    for turn in priya_turns():
        if until_session is not None and session_of(turn) > until_session:
            break
        store.add(turn)
        run_job(store, now=turn.created_at)
    return store


def test_every_turn_is_raced_at_every_position(merge_races: list[RaceCase]) -> None:
    # Given the races of the whole conversation, then every turn met every phase of a job
    phases_of: dict[str, set[JobPhase]] = {t.memory_id: set() for t in priya_turns()}
    for case in merge_races:
        phases_of[case.turn.memory_id].add(case.phase)
    assert all(phases == set(JobPhase) for phases in phases_of.values())
    # and landed between write-back operations, not only before the first
    assert any(case.phase is JobPhase.DURING_WRITE_BACK and case.occurrence > 0 for case in merge_races)


def test_the_merge_write_back_destroys_nothing_and_equals_the_serialised_run(merge_races: list[RaceCase]) -> None:
    for case in merge_races:
        # Then no memory live in the serialised run is missing, and the stores are identical
        assert case.destroyed() == (), (case.turn.memory_id, case.phase, case.occurrence)
        assert case.raced.active_ids() == case.serialised.active_ids()
        assert contents(case.raced) == contents(case.serialised), (case.turn.memory_id, case.phase)


def test_the_session_8_correction_survives_every_race_and_retires_the_northwind_facts(
    merge_races: list[RaceCase],
) -> None:
    expected = serialised_conversation()
    northwind = next(c["retires"] for c in fixture()["corrections"] if c["in_session"] == 8)
    for case in (c for c in merge_races if session_of(c.turn) == 8):
        # Given a session-8 turn that raced the job: it is live right after the race
        assert normalise_meaning(case.turn.text) in live_meanings(case.raced), (case.turn.memory_id, case.phase)
        # When the conversation goes on to its end
        final = finish_conversation(case.raced.copy(), after=case.turn)
        # Then it ends exactly as the serialised conversation, with the Northwind facts retired
        assert contents(final) == contents(expected)
        assert not live_meanings(final) & {normalise_meaning(t) for t in northwind}


def test_every_race_ends_in_the_serialised_conversation(merge_races: list[RaceCase]) -> None:
    expected = contents(serialised_conversation())
    for case in merge_races:
        final = finish_conversation(case.raced.copy(), after=case.turn)
        assert contents(final) == expected, (case.turn.memory_id, case.phase, case.occurrence)


@pytest.mark.parametrize("correction", fixture()["corrections"], ids=lambda c: f"session-{c['in_session']}")
def test_each_fixture_correction_retires_its_facts_with_lineage(correction: dict[str, Any]) -> None:
    # Given the conversation serialised up to the session before the correction
    retired_texts = {normalise_meaning(text) for text in correction["retires"]}
    before = serialised_conversation(until_session=int(correction["in_session"]) - 1)
    # When the correcting session lands
    after = serialised_conversation(until_session=int(correction["in_session"]))
    # Then each fact was still held before it (live, or merged into a live refinement such as
    # "Omar" into "Omar Haddad"; a plan such as "moving to Porto" retires nothing)
    assert _held(before, retired_texts) == retired_texts
    # and after it none is live, each record superseded by a chain that ends in a live record
    assert not live_meanings(after) & retired_texts
    assert _held(after, retired_texts) == retired_texts


def _held(store: InMemoryMemoryStore, texts: set[str]) -> set[str]:
    """The texts of `texts` some record of which is live or leads by lineage to a live record."""
    return {
        normalise_meaning(r.text)
        for r in store.all_records()
        if normalise_meaning(r.text) in texts and ends_live(store, r.memory_id)
    }


def test_the_replace_baseline_destroys_memories_the_merge_keeps(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the same races with the naive wholesale replace
    replace_races = list(race_every_position(priya_turns(), mode=WriteBackMode.REPLACE))
    # When counting memories live in the serialised run and missing from the raced one
    destroyed = sum(len(case.destroyed()) for case in replace_races)
    lost_in_session_8 = {
        case.turn.memory_id for case in replace_races if session_of(case.turn) == 8 and case.destroyed()
    }
    with capsys.disabled():
        print(f"\nreplace write-back: {destroyed} memories destroyed over {len(replace_races)} races")
    # Then it destroys memories, the whole of session 8 among them
    assert destroyed > 0
    assert lost_in_session_8 == {t.memory_id for t in priya_turns() if session_of(t) == 8}


def test_running_the_job_twice_in_a_row_changes_nothing_the_second_time() -> None:
    # Given the whole conversation, consolidated after every turn
    store = serialised_conversation()
    live = len(store.all_active())
    before = contents(store)
    # When the job runs again, twice
    first, second = run_job(store, now=priya_turns()[-1].created_at), run_job(store, now=priya_turns()[-1].created_at)
    # Then neither retires or rewrites anything, and the store is unchanged
    for plan in (first, second):
        assert plan is not None
        assert (plan.kept, plan.retired, plan.untouched, len(plan.new_versions)) == (live, 0, 0, 0)
    assert contents(store) == before
