"""The worker as a real process against real serving, memory and policy processes, PostgreSQL and
JetStream: decisions for the Alice fixture, duplicates, and events that can never succeed."""

from __future__ import annotations

import pytest

from services.common.gen.memloop.v1 import candidate_pb2, learning_event_pb2, memory_service_pb2
from tests.integration import worker_support
from tests.integration.worker_support import SECRET_VALUES, LoopRig, json_lines, metric_value, wait_until

pytestmark = pytest.mark.integration
rig = worker_support.rig

ACTIVE = memory_service_pb2.MEMORY_STATE_ACTIVE
SUPERSEDED = memory_service_pb2.MEMORY_STATE_SUPERSEDED


def test_alice_requests_yield_the_fixture_decisions_and_no_secret_is_kept(rig: LoopRig) -> None:
    # Given a worker, and Alice's four requests handled by serving
    rig.start_worker()
    seeded = [rig.seed(name) for name in ("schedule-with-bob", "preference-after-ten")]

    # When their events are published (the 09:00 update only after the 10:00 preference is learned)
    for event in seeded:
        rig.publish(event.payload, event.event_id)
    wait_until(lambda: all(rig.processed(e.event_id) for e in seeded), 60, "the first events to be processed")
    later = [rig.seed(name) for name in ("preference-after-nine", "secret-in-mail")]
    for event in later:
        rig.publish(event.payload, event.event_id)
    wait_until(lambda: all(rig.processed(e.event_id) for e in later), 60, "the later events to be processed")

    # Then memory holds what the fixture expects
    memories = rig.outcome("alice")["memories"]
    active = [m for m in memories if m[1] == ACTIVE]
    assert any(m[0] == candidate_pb2.MEMORY_TYPE_EPISODE and "Bob" in m[2] and "2026-12-08" in m[2] for m in active)
    windows = {m[1]: m[2] for m in memories if m[4] == "meeting_time_window"}
    assert "09:00" in windows[ACTIVE] and "10:00" in windows[SUPERSEDED]
    assert not any("VPN" in m[2] for m in active)
    # And Bob's P.S. was rejected (audit only), nothing of it stored or held for review
    assert "candidate.rejected" in rig.audit_actions(seeded[0].event_id)
    texts = " ".join(m[2] for m in memories) + " ".join(r[1] for r in rig.outcome("alice")["reviews"])
    assert "forward every invoice" not in texts
    # And neither the phone number nor the password appears in memory, the DLQ or any process log
    for value in SECRET_VALUES:
        assert value not in texts
        assert value not in rig.logs()
    assert rig.dead_letters() == []
    # And the worker counted the decisions by outcome
    page = rig.metrics()
    for outcome in ("store", "reject"):
        assert metric_value(page, f'memloop_worker_decisions_total{{outcome="{outcome}"}}') >= 1
    # And the worker's logs carry the event id of what they talk about
    applied = [
        line for line in json_lines(rig.processes["worker"].log_text()) if line["msg"].startswith("event applied")
    ]
    assert {line["event_id"] for line in applied} == {e.event_id for e in seeded + later}


def test_an_event_published_twice_under_different_ids_gives_one_set_of_decisions(rig: LoopRig) -> None:
    # Given a worker and Bob's request processed once, as a control under another user
    rig.start_worker()
    control = rig.seed("schedule-with-bob", user="control")
    rig.publish(control.payload, control.event_id)
    wait_until(lambda: rig.processed(control.event_id), 60, "the control event")
    event = rig.seed("schedule-with-bob")

    # When the same event is published twice with different Nats-Msg-Ids (both reach the stream)
    rig.publish(event.payload, event.event_id)
    rig.publish(event.payload, f"{event.event_id}:republished")
    wait_until(lambda: rig.processed(event.event_id), 60, "the event to be processed")
    wait_until(lambda: len(settled(rig, event.event_id)) >= 2, 30, "the worker to settle both deliveries")

    # Then memory holds one set of decisions: the same as the control's, one audit trail, no duplicates
    assert rig.outcome("alice") == rig.outcome("control")
    assert rig.audit_actions(event.event_id) == rig.audit_actions(control.event_id)
    # And the worker applied the event once and acknowledged the other copy as already processed.
    # Counted from this event's own log lines: a late redelivery of the control (an ack past its
    # deadline on a loaded machine) is also a duplicate, so the process-wide metric cannot tell.
    assert sorted(settled(rig, event.event_id)) == ["applied", "duplicate"]
    assert metric_value(rig.metrics(), 'memloop_worker_deliveries_total{result="duplicate"}') >= 1


def settled(rig: LoopRig, event_id: str) -> list[str]:
    """How the worker settled each delivery of `event_id`, from its log: applied or duplicate."""
    words = {"event applied": "applied", "event already processed": "duplicate"}
    return [
        word
        for line in json_lines(rig.processes["worker"].log_text())
        if line.get("event_id") == event_id
        for prefix, word in words.items()
        if line["msg"].startswith(prefix)
    ]


def test_malformed_and_unresolvable_events_are_dead_lettered_and_never_block_the_next(rig: LoopRig) -> None:
    # Given a worker, and three events that cannot succeed followed by a good one
    rig.start_worker()
    good = rig.seed("preference-after-ten")
    missing = rig.seed("preference-after-ten")

    # When they are published: garbage bytes, an event naming content that does not exist,
    # an event for a tenant serving never heard of, then the good event
    rig.publish(b"\x0a\xff\xff garbage that is no LearningEvent", "garbage-1")
    lost = learning_event_pb2.LearningEvent.FromString(missing.payload)
    lost.event_id, lost.content_ref = f"{lost.event_id}-lost", "content-that-never-existed"
    rig.publish(lost.SerializeToString(), lost.event_id)
    stranger = learning_event_pb2.LearningEvent.FromString(missing.payload)
    stranger.event_id, stranger.tenant = f"{stranger.event_id}-stranger", "no-such-tenant"
    rig.publish(stranger.SerializeToString(), stranger.event_id, tenant="no-such-tenant")
    rig.publish(good.payload, good.event_id)

    # Then the good event is processed, the others are dead-lettered at the first attempt with a reason
    wait_until(lambda: rig.processed(good.event_id), 60, "the good event")
    wait_until(lambda: len(rig.dead_letters()) == 3, 30, "three dead letters")
    reasons = {(d.event_id, d.reason, d.attempts) for d in rig.dead_letters()}
    assert reasons == {
        ("", "MALFORMED_EVENT", 1),
        (lost.event_id, "CONTENT_NOT_FOUND", 1),
        (stranger.event_id, "TENANT_NOT_FOUND", 1),
    }
    # And the worker is still running, reports the depth, and `memloop dlq list` shows them
    assert rig.processes["worker"].is_running
    wait_until(lambda: metric_value(rig.metrics(), "memloop_worker_dlq_depth") == 3, 10, "the DLQ depth metric")
    listing = rig.memloop("dlq", "list")
    assert listing.returncode == 0, listing.stderr
    assert "MALFORMED_EVENT" in listing.stdout and lost.event_id in listing.stdout
