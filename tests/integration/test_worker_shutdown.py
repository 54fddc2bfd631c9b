"""SIGTERM ends the worker within its drain period, whatever it was doing.

Seen: the worker logged "worker draining" and then hung until SIGKILL. A worker stopped for a
deploy must exit by itself (status 0, "worker stopped") within the drain period plus a margin,
idle, with an event in flight against a memory that is down, and with NATS unreachable. Real
processes; the bound is the observable fact (no sleeps as barriers).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from services.common.infra.nats import EmbeddedNats
from services.common.infra.processes import ServiceProcess
from tests.integration import worker_support
from tests.integration.worker_support import LoopRig, metric_value, wait_until

pytestmark = pytest.mark.integration
rig = worker_support.rig

DRAIN_SECONDS = 2.0
MARGIN_SECONDS = 8.0


def _sigterm_and_time_exit(process: ServiceProcess) -> float:
    started = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)
    deadline = started + DRAIN_SECONDS + MARGIN_SECONDS
    while process.is_running and time.monotonic() < deadline:
        time.sleep(0.05)
    return time.monotonic() - started


def _assert_stopped_cleanly(process: ServiceProcess, took: float) -> None:
    assert not process.is_running, f"worker still running {took:.1f}s after SIGTERM:\n{process.log_text()[-3000:]}"
    assert process.returncode == 0, process.log_text()[-3000:]
    assert "worker stopped" in process.log_text()


def test_an_idle_worker_exits_on_sigterm_within_the_drain_period(rig: LoopRig) -> None:
    # Given a worker consuming an empty stream
    worker = rig.start_worker(MEMLOOP_DRAIN_SECONDS=str(DRAIN_SECONDS))
    # When it is asked to stop
    took = _sigterm_and_time_exit(worker)
    # Then it drains and exits by itself
    _assert_stopped_cleanly(worker, took)


def test_a_worker_with_an_event_in_flight_against_a_down_memory_exits_on_sigterm(rig: LoopRig) -> None:
    # Given memory down and an event the worker keeps retrying
    worker = rig.start_worker(MEMLOOP_DRAIN_SECONDS=str(DRAIN_SECONDS), MEMLOOP_WORKER_MAX_DELIVER="50")
    rig.processes["memory"].kill()
    event = rig.seed("preference-after-ten")
    rig.publish(event.payload, event.event_id)
    wait_until(
        lambda: metric_value(rig.metrics(), "memloop_worker_consumer_ack_pending") >= 1, 30, "an event in flight"
    )
    # When the worker is asked to stop
    took = _sigterm_and_time_exit(worker)
    # Then it exits by itself within the drain period (the event is redelivered to another worker)
    _assert_stopped_cleanly(worker, took)


def test_a_worker_whose_nats_is_gone_exits_on_sigterm(rig: LoopRig, tmp_path: Path) -> None:
    # Given a worker on its own nats-server, which then dies (the worker keeps reconnecting)
    with EmbeddedNats(tmp_path / "nats") as private:
        worker = rig.start_worker(
            "worker-private-nats", MEMLOOP_DRAIN_SECONDS=str(DRAIN_SECONDS), MEMLOOP_NATS_URL=private.url
        )
        private.kill()
        wait_until(lambda: "disconnected" in worker.log_text(), 30, "the worker to notice NATS is gone")
        # When the worker is asked to stop
        took = _sigterm_and_time_exit(worker)
    # Then it exits by itself within the drain period
    _assert_stopped_cleanly(worker, took)


def test_a_worker_that_has_learned_stops_without_waiting_out_its_nats_drain(rig: LoopRig) -> None:
    """nats-py's fetch leaves the messages it took from the subscription's buffer unmarked (a
    timed-out pull's late status message is one), and the client's drain waits for them: a worker
    that had sat idle through a few pulls waited at every stop until nats-py's drain timeout
    cancelled the wait, which logged an error (and took about 5 s more)."""
    # Given a worker that has fetched and learned events
    worker = rig.start_worker(MEMLOOP_DRAIN_SECONDS=str(DRAIN_SECONDS))
    seeded = [rig.seed(name) for name in ("preference-after-ten", "schedule-with-bob")]
    for event in seeded:
        rig.publish(event.payload, event.event_id)
    wait_until(lambda: all(rig.processed(e.event_id) for e in seeded), 60, "the events to be processed")
    # and has then sat idle through a few pulls that expired empty
    idle_before = metric_value(rig.metrics(), "memloop_worker_empty_pulls_total")
    wait_until(
        lambda: metric_value(rig.metrics(), "memloop_worker_empty_pulls_total") >= idle_before + 3,
        30,
        "three empty pulls",
    )
    # When it is asked to stop
    took = _sigterm_and_time_exit(worker)
    # Then it stops cleanly and no shutdown step ran out its bound
    _assert_stopped_cleanly(worker, took)
    stopping = worker.log_text().split("draining", 1)[-1]
    assert "did not finish within" not in stopping and '"level": "ERROR"' not in stopping, stopping[-3000:]
