"""Failure and recovery of the learning path with real processes: memory outages (short and beyond
the retry budget), dead-letter replay with `memloop dlq`, and a worker killed between policy and
memory. Each disturbed run is compared with an undisturbed run of the same request (a control
user in the same stack): the memories must be the same."""

from __future__ import annotations

import pytest

from services.worker.adapters.faults import CRASH_EXIT_CODE
from tests.integration import worker_support
from tests.integration.worker_support import SECRET_VALUES, LoopRig, Seeded, metric_value, wait_until

pytestmark = pytest.mark.integration
rig = worker_support.rig


def _control(rig: LoopRig) -> Seeded:
    """Bob's request processed without any disturbance, under the user `control`.

    Waits for the worker's own count of processed deliveries too, not only for memory's record:
    memory commits before its answer reaches the worker, and a test that kills memory in between
    would turn the control into a (correctly) retried event.
    """
    processed = 'memloop_worker_deliveries_total{result="processed"}'
    before = metric_value(rig.metrics(), processed)
    control = rig.seed("schedule-with-bob", user="control")
    rig.publish(control.payload, control.event_id)
    wait_until(
        lambda: rig.processed(control.event_id) and metric_value(rig.metrics(), processed) > before,
        60,
        "the control event to be applied and acknowledged",
    )
    return control


def test_memory_down_beyond_the_budget_dead_letters_and_replay_gives_the_undisturbed_result(rig: LoopRig) -> None:
    # Given a worker whose budget is 3 attempts and 3 seconds, and an undisturbed control run
    rig.start_worker(MEMLOOP_WORKER_MAX_DELIVER="3", MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS="3")
    control = _control(rig)
    event = rig.seed("schedule-with-bob")

    # When memory is down while the event is delivered, for longer than the budget
    rig.processes["memory"].kill()
    rig.publish(event.payload, event.event_id)
    wait_until(lambda: len(rig.dead_letters()) == 1, 60, "the event to be dead-lettered")

    # Then it is in the dead-letter stream with its reason, attempts and a content-free last error
    (letter,) = rig.dead_letters()
    assert (letter.event_id, letter.reason) == (event.event_id, "RETRIES_EXHAUSTED")
    assert letter.attempts >= 3
    assert "MEMORY_UNAVAILABLE" in letter.last_error or "MEMORY_DEADLINE_EXCEEDED" in letter.last_error
    assert letter.data == event.payload
    assert not any(value in str(letter.headers) for value in SECRET_VALUES)
    wait_until(lambda: metric_value(rig.metrics(), "memloop_worker_dlq_depth") == 1, 10, "the DLQ depth metric")

    # When memory is back and the operator replays the event
    rig.restart("memory")
    replay = rig.memloop("dlq", "replay", event.event_id)

    # Then the dead letter is gone and memory ends as the undisturbed run did
    assert replay.returncode == 0, replay.stderr
    assert rig.dead_letters() == []
    wait_until(lambda: rig.processed(event.event_id), 90, "the replayed event to be processed")
    assert rig.outcome("alice") == rig.outcome("control")
    assert rig.audit_actions(event.event_id) == rig.audit_actions(control.event_id)

    # And replaying again finds nothing to replay
    assert rig.memloop("dlq", "replay", event.event_id).returncode == 1


def test_a_memory_outage_shorter_than_the_dead_letter_age_dead_letters_nothing(rig: LoopRig) -> None:
    # Given a worker allowed 3 attempts but a 60-second dead-letter age, and a control run
    rig.start_worker(MEMLOOP_WORKER_MAX_DELIVER="3", MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS="60")
    _control(rig)
    event = rig.seed("schedule-with-bob")

    # When memory is down for more than 3 deliveries of the event, then comes back
    rig.processes["memory"].kill()
    rig.publish(event.payload, event.event_id)
    wait_until(
        lambda: metric_value(rig.metrics(), 'memloop_worker_deliveries_total{result="retry"}') >= 4,
        60,
        "more failed deliveries than max_deliver",
    )
    # (meanwhile the queue figures show the waiting event and its age)
    wait_until(
        lambda: metric_value(rig.metrics(), "memloop_worker_consumer_oldest_pending_age_seconds") >= 1.0,
        10,
        "the oldest pending age to grow",
    )
    assert metric_value(rig.metrics(), "memloop_worker_consumer_ack_pending") == 1
    rig.restart("memory")

    # Then the event is processed as if nothing happened, and nothing was dead-lettered
    wait_until(lambda: rig.processed(event.event_id), 90, "the event to be processed after the outage")
    assert rig.dead_letters() == []
    assert rig.outcome("alice") == rig.outcome("control")
    wait_until(
        lambda: (
            metric_value(rig.metrics(), "memloop_worker_consumer_oldest_pending_age_seconds") == 0
            and metric_value(rig.metrics(), "memloop_worker_consumer_ack_pending") == 0
        ),
        10,
        "the queue to drain",
    )


def test_a_worker_killed_between_policy_and_memory_redelivers_to_the_undisturbed_result(rig: LoopRig) -> None:
    # Given an undisturbed control run, then a worker that dies right before ApplyLearning
    rig.start_worker()
    control = _control(rig)
    rig.processes["worker"].terminate()
    crashing = rig.start_worker("crashing-worker", MEMLOOP_FAULT_WORKER_CRASH_BEFORE_APPLY="1")
    event = rig.seed("schedule-with-bob")

    # When the event is delivered to it
    rig.publish(event.payload, event.event_id)
    wait_until(lambda: not crashing.is_running, 60, "the worker to crash before applying")

    # Then it died at the fault hook and memory committed nothing of the event
    assert crashing.returncode == CRASH_EXIT_CODE
    assert not rig.processed(event.event_id)

    # When a healthy worker takes over the same durable consumer
    rig.start_worker("worker-2")

    # Then the unacknowledged event is redelivered and ends exactly as the undisturbed run
    wait_until(lambda: rig.processed(event.event_id), 60, "the redelivered event to be processed")
    assert rig.outcome("alice") == rig.outcome("control")
    assert rig.audit_actions(event.event_id) == rig.audit_actions(control.event_id)
    assert rig.dead_letters() == []
