"""The consolidation job in a real memory process, over gRPC, against real PostgreSQL and NATS.

Memories arrive as they do in production (ApplyLearning, one learning event per turn). Positions
inside a running job are made deterministic with the test-only pause folder
(MEMLOOP_FAULT_CONSOLIDATION_PAUSE_DIR): the job stops at a named phase until the test lets it go.

The race here covers the positions reachable from outside a process — before the read, after the
read (the compute has not started), after the compute (the write-back has not started) and inside
the write-back transaction — for every turn of Priya's conversation. The full matrix, including a
turn between any two write-back operations, is proven on the in-memory twin of the store in
`tests/unit/test_consolidation_race.py`; in PostgreSQL the write-back is one transaction, so
"between two operations" is not observable from outside it.
"""

from __future__ import annotations

import functools
from pathlib import Path

import grpc
import pytest

from services.common.gen.memloop.v1 import consolidation_service_pb2 as cs
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.grpc_errors import error_details
from tests.helpers import SpawnService, random_ref
from tests.integration.consolidation_support import (
    FAILED,
    RUNNING,
    SKIPPED_BUSY,
    SUCCEEDED,
    USER,
    Pauses,
    Turn,
    all_rows,
    background,
    fixture,
    jobs_stub,
    live_set,
    memories,
    priya_turns,
    start_memory,
    still_running,
    turn_request,
)
from tests.integration.test_memory_support import MODULE, MemoryCluster, MemoryNode, Stub, token, wait_until

pytestmark = pytest.mark.integration

POSITIONS = ("before_read", "after_read", "after_compute", "write_back")


@pytest.fixture
def pauses(tmp_path: Path) -> Pauses:
    return Pauses(tmp_path / "pauses")


@pytest.fixture
def node(cluster: MemoryCluster, pauses: Pauses) -> MemoryNode:
    return start_memory(cluster, "memory-a", pauses.folder)


def _store(stub: Stub, tenant: str, turns: list[Turn]) -> list[pb.AppliedDecision]:
    return [stub.ApplyLearning(turn_request(tenant, turn)).applied[0] for turn in turns]


def _ends_live(stub: Stub, tenant: str, memory_id: str) -> bool:
    """Following superseded_by from `memory_id` reaches an active memory (its lineage lives on)."""
    for _ in range(100):
        memory = stub.GetMemory(pb.GetMemoryRequest(tenant=tenant, memory_id=memory_id)).memory
        if memory.state == pb.MEMORY_STATE_ACTIVE:
            return True
        if not memory.superseded_by:
            return False
        memory_id = memory.superseded_by
    return False


@pytest.mark.timeout(240)
@pytest.mark.parametrize("position", POSITIONS)
def test_a_turn_raced_against_a_job_loses_nothing_and_equals_the_serialised_run(
    node: MemoryNode, pauses: Pauses, position: str
) -> None:
    # Given: two tenants replaying Priya's conversation; in "raced" each turn lands while the job
    # (triggered by the previous turn) is held at `position`; in "serial" the job runs, then the turn
    stub, jobs = node.stub(), jobs_stub(node)
    raced, serial = random_ref("raced"), random_ref("serial")
    blocked_by_write_back = retired = 0
    applied_at: dict[Turn, str] = {}
    for turn in priya_turns():
        before = {m.memory_id for m in memories(stub, raced)}
        # When: the turn lands at `position` of a running job
        with background() as submit:
            with pauses.holding(position):
                job = submit(lambda: jobs.run(raced))
                pauses.wait_reached(position)
                landed = submit(functools.partial(stub.ApplyLearning, turn_request(raced, turn)))
                if position == "write_back":
                    blocked_by_write_back += still_running(landed, 0.3)
                else:
                    landed.result(timeout=30)  # nothing the job holds here may block a turn
            raced_job, applied = job.result(timeout=60), landed.result(timeout=60).applied[0]
        if position == "before_read":
            stub.ApplyLearning(turn_request(serial, turn))
            serial_job = jobs.run(serial)
        else:
            serial_job = jobs.run(serial)
            stub.ApplyLearning(turn_request(serial, turn))
        # Then: nothing destroyed, and the raced store equals the serialised one
        assert raced_job.state == SUCCEEDED and serial_job.state == SUCCEEDED, raced_job.error
        raced_live, serial_live = live_set(stub, raced), live_set(stub, serial)
        assert serial_live - raced_live == set(), (turn, position, "destroyed by the write-back")
        assert raced_live == serial_live, (turn, position)
        assert (raced_job.retired, raced_job.deferred) == (serial_job.retired, 0), (turn, position)
        # Then: a memory the turn created after the read is untouched (live, under the id the turn
        # got), one created before it lives on by lineage; and the turn landed where it was sent:
        # after the snapshot exactly when the job reports one untouched memory
        created = applied.memory_id not in before
        if created and position != "before_read":
            assert applied.memory_id in {m.memory_id for m in memories(stub, raced)}, (turn, position)
        assert _ends_live(stub, raced, applied.memory_id), (turn, position)
        after_snapshot = created and position in ("after_read", "after_compute")
        assert raced_job.untouched == int(after_snapshot), (turn, position)
        retired += raced_job.retired
        applied_at[turn] = applied.memory_id
    # When: the conversation ends with one more job on each side
    assert jobs.run(raced).state == SUCCEEDED and jobs.run(serial).state == SUCCEEDED
    # Then: the stores are equal, the session-8 correction is live and the Northwind facts are retired
    assert live_set(stub, raced) == live_set(stub, serial)
    live_texts = {text for text, _, _ in live_set(stub, raced)}
    northwind = next(c["retires"] for c in fixture()["corrections"] if c["in_session"] == 8)
    assert live_texts.isdisjoint(northwind)
    assert all(_ends_live(stub, raced, applied_at[t]) for t in priya_turns() if t.session == 8)
    retired_ids = {applied_at[t] for t in priya_turns() if t.text in northwind}
    assert retired_ids.isdisjoint({m.memory_id for m in memories(stub, raced)})
    assert retired > 0  # the raced jobs had real work: merges and corrections
    print(f"[{position}] raced jobs retired {retired}; turns held by write-back row locks: {blocked_by_write_back}")


def _sources_by_text(stub: Stub, tenant: str) -> set[tuple[str, tuple[str, ...]]]:
    return {(text, sources) for text, _, sources in live_set(stub, tenant)}


def test_a_turn_reinforcing_what_the_job_merges_is_never_absorbed(node: MemoryNode, pauses: Pauses) -> None:
    # Given: one fact said twice in two wordings (the job will merge them), in two tenants
    stub, jobs = node.stub(), jobs_stub(node)
    said = [Turn(1, 2, "Priya prefers async standups"), Turn(3, 0, "Priya prefers asynchronous standups")]
    again = Turn(7, 2, "Priya prefers asynchronous standups")
    raced, serial = random_ref("reinforced"), random_ref("serial")
    _store(stub, raced, said)
    _store(stub, serial, said)
    # When: the same fact is said again (reinforcing a record the job read) after the job's read
    with background() as submit:
        with pauses.holding("after_read"):
            job = submit(lambda: jobs.run(raced))
            pauses.wait_reached("after_read")
            stub.ApplyLearning(turn_request(raced, again))
        deferred = job.result(timeout=60)
    # Then: the job leaves that fact for the next run rather than retire a record it did not read
    assert (deferred.state, deferred.deferred, deferred.retired) == (SUCCEEDED, 2, 0)
    assert {t for t, _ in _sources_by_text(stub, raced)} == {t.text for t in said}
    # When: the next job runs, and the serialised side runs job, turn, job
    assert jobs.run(raced).retired == 1
    jobs.run(serial)
    stub.ApplyLearning(turn_request(serial, again))
    jobs.run(serial)
    # Then: both end as one memory carrying all three events
    expected = {(said[0].text, tuple(sorted(t.event_id for t in (*said, again))))}
    assert _sources_by_text(stub, raced) == _sources_by_text(stub, serial) == expected


def test_a_turn_touching_rows_the_write_back_holds_waits_for_its_commit(node: MemoryNode, pauses: Pauses) -> None:
    # Given: one fact in two wordings, and a job held inside its write-back transaction
    stub, jobs = node.stub(), jobs_stub(node)
    said = [Turn(1, 2, "Priya prefers async standups"), Turn(3, 0, "Priya prefers asynchronous standups")]
    again = Turn(7, 2, "Priya prefers async standups")
    raced, serial = random_ref("held"), random_ref("serial")
    _store(stub, raced, said)
    _store(stub, serial, said)
    with background() as submit:
        with pauses.holding("write_back"):
            job = submit(lambda: jobs.run(raced))
            pauses.wait_reached("write_back")
            # When: a turn reinforces the record the write-back is replacing
            landed = submit(lambda: stub.ApplyLearning(turn_request(raced, again)))
            # Then: it waits on the row lock instead of writing under the job
            assert still_running(landed, 0.5)
        assert job.result(timeout=60).retired == 1 and landed.result(timeout=60).applied[0].memory_id
    # Then: it lands on the job's new version, exactly as if it had come after the job
    jobs.run(serial)
    stub.ApplyLearning(turn_request(serial, again))
    assert live_set(stub, raced) == live_set(stub, serial)
    assert len(memories(stub, raced)) == 1


def test_a_second_job_in_a_row_retires_nothing_and_changes_nothing(node: MemoryNode) -> None:
    # Given: the whole conversation stored, and one job run over it
    stub, jobs, tenant = node.stub(), jobs_stub(node), random_ref("twice")
    _store(stub, tenant, priya_turns())
    filled = node.metric("memloop_index_vectors_filled_total")
    first = jobs.run(tenant)
    assert first.state == SUCCEEDED and first.retired > 0 and first.deferred == 0
    rows = all_rows(stub, tenant)
    # When: it runs again at once
    second = jobs.run(tenant)
    # Then: it keeps everything, retires and defers nothing, and wrote no row and no audit event
    assert (second.state, second.retired, second.untouched, second.deferred) == (SUCCEEDED, 0, 0, 0)
    assert second.kept == second.snapshot_size == len(memories(stub, tenant))
    assert all_rows(stub, tenant) == rows
    assert not stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant=tenant, event_id=second.job_id)).audit_events
    # Then: retrieval serves the job's versions at once (vectors carried over), never a retired record
    live_ids = {m.memory_id for m in memories(stub, tenant)}
    hits = stub.SearchMemories(pb.SearchMemoriesRequest(tenant=tenant, user=USER, query="async standups", k=20))
    assert hits.results and {h.memory.memory_id for h in hits.results} <= live_ids
    # (which wording of the standups preference is kept follows statement times, which restating moves)
    assert "standups" in hits.results[0].memory.text
    # (and the index had to embed none of them itself: each new version's vector was copied)
    assert node.metric("memloop_index_vectors_filled_total") == filled
    # Then: every transition of the first job names it as its event and carries its trace
    audit = stub.ListAuditEvents(pb.ListAuditEventsRequest(tenant=tenant, event_id=first.job_id, page_size=1000))
    assert audit.audit_events and {e.trace_id for e in audit.audit_events} == {first.trace_id}
    assert len(first.trace_id) == 32


def test_a_repeated_request_id_returns_the_first_job_and_runs_nothing(node: MemoryNode) -> None:
    # Given: the whole conversation stored, and one job run under a request_id
    stub, jobs, tenant = node.stub(), jobs_stub(node), random_ref("idem")
    _store(stub, tenant, priya_turns())
    request_id = random_ref("run")
    first = jobs.run(tenant, request_id=request_id)
    assert first.state == SUCCEEDED and first.retired > 0
    rows = all_rows(stub, tenant)
    # When: the same request is sent again, and its id is reused for another user
    again = jobs.run(tenant, request_id=request_id)
    with pytest.raises(grpc.RpcError) as reused:
        jobs.run(tenant, "someone-else", request_id=request_id)
    # Then: the repeat is the first job (same id and report), no second job exists and nothing changed
    assert again == first
    assert [j.job_id for j in jobs.list(tenant).jobs] == [first.job_id]
    assert all_rows(stub, tenant) == rows
    assert (reused.value.code(), error_details(reused.value)[0]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "REQUEST_ID_REUSED",
    )


def test_two_jobs_for_one_user_never_interleave(node: MemoryNode, pauses: Pauses) -> None:
    # Given: a conversation with work for a job, and a first job held after its read
    stub, jobs, tenant = node.stub(), jobs_stub(node), random_ref("pair")
    _store(stub, tenant, priya_turns())
    with background() as submit:
        with pauses.holding("after_read"):
            first = submit(lambda: jobs.run(tenant))
            first_id = pauses.wait_reached("after_read")
            # When: a second job that may not wait starts, and a third that waits
            busy = jobs.run(tenant)
            waiting = submit(lambda: jobs.run(tenant, wait=True))
            # Then: the second reports the first as running; the third is held back by it
            assert busy.state == SKIPPED_BUSY and first_id in busy.error
            assert still_running(waiting, 1.0)
            assert jobs.get(tenant, first_id).state == RUNNING
        done, after = first.result(timeout=60), waiting.result(timeout=60)
    # Then: the third ran after the first committed: it read the first's result and had nothing to do
    assert done.state == SUCCEEDED and done.retired > 0
    assert after.state == SUCCEEDED and after.retired == 0 and after.snapshot_size == len(memories(stub, tenant))
    listed = jobs.list(tenant, USER).jobs
    assert [j.job_id for j in listed][-1] == first_id and {j.state for j in listed} == {SUCCEEDED, SKIPPED_BUSY}


def test_a_job_killed_during_its_write_back_leaves_nothing_and_the_next_run_completes(
    cluster: MemoryCluster, spawn: SpawnService, pauses: Pauses
) -> None:
    # Given: Priya's conversation up to session 8, and a reference tenant with the same history
    node = start_memory(cluster, "memory-k", pauses.folder)
    stub, jobs, tenant, reference = node.stub(), jobs_stub(node), random_ref("killed"), random_ref("ref")
    turns = [t for t in priya_turns() if t.session <= 8]
    _store(stub, tenant, turns)
    _store(stub, reference, turns)
    rows_before = all_rows(stub, tenant)
    # When: the memory process is SIGKILLed with the write-back applied but not committed
    with pauses.holding("before_commit"), background() as submit:
        doomed = submit(lambda: jobs.run(tenant))
        killed_id = pauses.wait_reached("before_commit")
        node.process.kill()
        with pytest.raises(grpc.RpcError):
            doomed.result(timeout=30)
    restarted = spawn(MODULE, node.env, node.port, node.name)
    assert restarted.is_running
    stub, jobs = Stub(node.port, token()), jobs_stub(node)
    # Then: nothing of the killed write-back is visible
    assert all_rows(stub, tenant) == rows_before
    # When: the job runs again
    again = jobs.run(tenant)
    # Then: it completes, the killed job is recorded as failed, and the store equals a clean run's
    assert again.state == SUCCEEDED and again.retired > 0
    killed = jobs.get(tenant, killed_id)
    assert killed.state == FAILED and "abandoned" in killed.error
    assert jobs.run(reference).state == SUCCEEDED
    assert live_set(stub, tenant) == live_set(stub, reference)
    assert jobs.run(tenant).retired == 0


def test_contradictions_go_to_review_once(node: MemoryNode) -> None:
    # Given: one event that says Priya lives in two cities at the same instant (a tie no rule decides)
    stub, jobs, tenant = node.stub(), jobs_stub(node), random_ref("tie")
    tie = [Turn(3, 0, "Priya lives in Lisbon"), Turn(3, 1, "Priya lives in Porto")]
    stub.ApplyLearning(turn_request(tenant, *tie))
    # When: two jobs run
    first, second = jobs.run(tenant), jobs.run(tenant)
    # Then: both report the contradiction; its contenders are in review once, both still live
    assert (first.sent_to_review, second.sent_to_review, first.retired) == (1, 1, 0)
    items = stub.ListReviewItems(pb.ListReviewItemsRequest(tenant=tenant, user=USER)).review_items
    assert sorted(i.decision.candidate.text for i in items) == sorted(t.text for t in tie)
    assert {i.decision.reasons[0].code for i in items} == {"CONSOLIDATION_CONTRADICTION"}
    assert len(memories(stub, tenant)) == 2


@pytest.mark.quiet  # a job must start within 2 s of the memory that triggers it
def test_the_scheduler_runs_jobs_after_n_memories_and_after_idle_time(cluster: MemoryCluster, pauses: Pauses) -> None:
    # Given: a replica that consolidates after 3 new memories or 2 s idle
    node = start_memory(
        cluster,
        "memory-s",
        pauses.folder,
        MEMLOOP_CONSOLIDATE_AFTER_MEMORIES="3",
        MEMLOOP_CONSOLIDATE_IDLE_SECONDS="2",
        MEMLOOP_CONSOLIDATE_POLL_SECONDS="0.2",
    )
    stub, jobs = node.stub(), jobs_stub(node)
    busy, quiet = random_ref("busy"), random_ref("quiet")
    # When: one user gets three new memories (two of them one fact restated) and another just one
    restated = [Turn(1, 2, "Priya prefers async standups"), Turn(3, 0, "Priya prefers asynchronous standups")]
    _store(stub, busy, [*restated, Turn(2, 1, "Priya likes hiking on weekends")])
    _store(stub, quiet, [Turn(1, 0, "Priya works at Northwind Labs")])

    def completed(tenant: str) -> list[cs.ConsolidationJob]:
        return [j for j in jobs.list(tenant, USER).jobs if j.state == SUCCEEDED]

    # Then: the first is consolidated by count, before it was idle long, and the restatement merged
    assert wait_until(lambda: bool(completed(busy)), timeout=10)
    by_count = completed(busy)[0]
    newest = max(m.create_time.ToDatetime() for m in memories(stub, busy, active_only=False))
    assert (by_count.start_time.ToDatetime() - newest).total_seconds() < 2.0 and by_count.retired == 1
    assert len(memories(stub, busy)) == 2
    # Then: the second is consolidated once idle for 2 s
    assert wait_until(lambda: bool(completed(quiet)), timeout=15)
    job = jobs.list(quiet, USER).jobs[0]
    stored = memories(stub, quiet)[0].create_time.ToDatetime()
    assert (job.start_time.ToDatetime() - stored).total_seconds() >= 2.0
    assert node.metric("memloop_consolidation_jobs_total", state="completed", trigger="scheduler") >= 2
    # Then: with nothing new, no further job starts
    count = len(jobs.list(busy, USER).jobs)
    assert not wait_until(lambda: len(jobs.list(busy, USER).jobs) > count, timeout=3)


def test_access_is_checked_first_and_lists_page(node: MemoryNode) -> None:
    # Given: a tenant with three jobs
    tenant = random_ref("acl")
    jobs = jobs_stub(node)
    ids = [jobs.run(tenant).job_id for _ in range(3)]
    reader, other = jobs_stub(node, tenant=tenant, roles=("reader",)), jobs_stub(node, tenant="other", roles=("admin",))
    # When / Then: a reader may read but not run; another tenant may do neither, even for a missing job
    with pytest.raises(grpc.RpcError) as denied:
        reader.run(tenant)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as foreign:
        other.get(tenant, "no-such-job")
    assert foreign.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as missing:
        reader.get(tenant, "no-such-job")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_details(missing.value)[0] == "CONSOLIDATION_JOB_NOT_FOUND"
    # Then: the list pages newest first, one at a time
    seen, token_ = [], ""
    while True:
        page = reader.list(tenant, USER, page_size=1, page_token=token_)
        seen += [j.job_id for j in page.jobs]
        token_ = page.next_page_token
        if not token_:
            break
    assert seen == ids[::-1]
