"""NATS stopped for 30 s under steady traffic: serving keeps answering, the relay keeps the events in
the outbox (nothing dead-lettered, nothing lost), reconnects by itself, and every committed event
reaches the stream exactly once.

The test runs its own nats-server (stopping the session's would disturb other tests, and on
external servers it cannot be stopped at all).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.infra.nats import EmbeddedNats
from tests.integration.serving_relay_support import Stack, alice_request, make_stack

pytestmark = pytest.mark.integration
__all__ = ["make_stack"]

OUTAGE_SECONDS = 30.0
RATE_PER_SECOND = 20.0


@pytest.fixture
def own_nats(tmp_path: Path) -> Iterator[EmbeddedNats]:
    server = EmbeddedNats(tmp_path / "nats", log_path=tmp_path / "nats-server.log").start()
    yield server
    server.stop()


class _SteadyTraffic:
    """Sends Alice's requests at a fixed rate from a thread until stopped; records what committed."""

    def __init__(self, stack: Stack) -> None:
        self._stub = stack.stub(stack.token())
        self._stop = threading.Event()
        self.committed: list[str] = []
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _SteadyTraffic:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        index = 0
        while not self._stop.wait(1.0 / RATE_PER_SECOND):
            try:
                self.committed.append(self._stub.HandleRequest(alice_request(index % 4), timeout=10).event_id)
            except Exception as exc:  # recorded and asserted on: serving must not fail during the outage
                self.errors.append(exc)
            index += 1


def test_nats_outage_of_30s_loses_nothing_and_duplicates_nothing(
    make_stack: Callable[..., Stack], own_nats: EmbeddedNats
) -> None:
    # Given serving and a relay on a nats-server we may stop, and steady traffic
    stack = make_stack(nats_url=own_nats.url)
    relay = stack.start_relay(MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS="2", MEMLOOP_RELAY_LEASE_SECONDS="10")
    with _SteadyTraffic(stack) as traffic:
        time.sleep(3)

        # When NATS is down for 30 seconds under that traffic, then comes back
        own_nats.stop()
        stopped_at = len(traffic.committed)
        time.sleep(OUTAGE_SECONDS)
        backlog_during_outage = stack.unpublished()
        committed_during_outage = len(traffic.committed) - stopped_at
        own_nats.start()
        time.sleep(3)

    # Then serving answered throughout, and the events of the outage waited in the outbox
    assert traffic.errors == []
    assert committed_during_outage >= OUTAGE_SECONDS * RATE_PER_SECOND * 0.5
    assert backlog_during_outage >= committed_during_outage * 0.9
    stack.wait_all_published(60)
    time.sleep(0.5)

    # And every committed event is in the stream exactly once; the relay never gave up on one
    ids = Counter(m.msg_id for m in stack.stream_messages())
    assert set(ids) == set(traffic.committed)
    assert max(ids.values()) == 1
    assert relay.is_running
    assert stack.query("SELECT count(*) FROM outbox WHERE published_at IS NULL")[0][0] == 0
