"""A relay killed mid-pipeline — a window of publishes in flight, nothing marked yet — loses
nothing: the next relay publishes every unmarked row, JetStream drops the copies of those that had
reached the stream, and the stream ends with exactly one message per outbox row.
"""

from __future__ import annotations

import signal

import pytest

from tests.integration.serving_relay_support import Stack, make_stack, stack, wait_until

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]

_ROWS = 1500
_PIPELINE = {
    "MEMLOOP_RELAY_BATCH_SIZE": "50",
    "MEMLOOP_RELAY_MAX_IN_FLIGHT": "200",
    "MEMLOOP_RELAY_LEASE_SECONDS": "3",
    "MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS": "2",
}


def test_sigkill_mid_pipeline_leaves_exactly_one_message_per_outbox_row(stack: Stack) -> None:
    # Given a relay that dies at its first PubAck, and a backlog of outbox rows committed at once
    doomed = stack.start_relay("relay-doomed", MEMLOOP_FAULT_RELAY_CRASH_AFTER_PUBLISH="1", **_PIPELINE)
    [(inserted,)] = stack.query(
        "WITH added AS (INSERT INTO outbox (event_id, tenant, request_id, trace_id, payload) "
        "SELECT gen_random_uuid(), 'acme', 'req-pipeline-' || g, md5(g::text), convert_to('event ' || g, 'UTF8') "
        "FROM generate_series(1, %s) AS g RETURNING 1) SELECT count(*) FROM added",
        _ROWS,
    )
    assert inserted == _ROWS
    stack.query("SELECT pg_notify('memloop_outbox', '')")
    wait_until(lambda: doomed.returncode is not None, 20, "the relay to kill itself")
    assert doomed.returncode == -signal.SIGKILL
    # Whatever it had written to its socket reaches the stream: wait until the stream holds some
    # of its messages and three reads in a row agree.
    seen: list[int] = []

    def settled() -> bool:
        seen.append(len(stack.stream_messages()))
        return len(seen) >= 3 and seen[-1] > 0 and seen[-1] == seen[-2] == seen[-3]

    wait_until(settled, 20, "the killed relay's publishes to settle in the stream")

    # Then it had claimed rows and published some of them, and marked none
    claimed = stack.query("SELECT count(*) FROM outbox WHERE publish_attempts > 0")[0][0]
    before = {m.msg_id for m in stack.stream_messages()}
    assert claimed >= 1 and before
    assert stack.unpublished() == _ROWS

    # When a healthy relay takes over once the leases lapse
    stack.start_relay("relay-restarted", **_PIPELINE)
    stack.wait_all_published(60)

    # Then every row is in the stream exactly once, and the re-published ones are the deduped copies
    ids = [m.msg_id for m in stack.stream_messages()]
    rows = {str(r[0]): bool(r[1]) for r in stack.query("SELECT event_id, duplicate FROM outbox")}
    assert len(ids) == len(set(ids)) == _ROWS
    assert set(ids) == set(rows)
    assert {event_id for event_id, duplicate in rows.items() if duplicate} == before
