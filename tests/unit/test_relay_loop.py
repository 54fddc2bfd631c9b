"""The relay loop against in-memory outbox and stream: marks after PubAck only, retries, crash hook."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from services.relay.adapters.in_memory import CountingMetrics, InMemoryJetStream, InMemoryOutboxStore
from services.relay.domain.model import OutboxRow, PublishReceipt, RelayTiming
from services.relay.service.ports import PublishOutcomes
from services.relay.service.relay import Relay, RelayConfig

_TIMING = RelayTiming(lease_seconds=0.5, publish_timeout_seconds=0.1, backoff_max_seconds=0.05)


def _rows(count: int) -> list[OutboxRow]:
    return [OutboxRow(str(uuid.uuid4()), "acme", "ab" * 16, "cd" * 8, b"evt", datetime.now(UTC)) for _ in range(count)]


def _relay(
    store: InMemoryOutboxStore,
    stream: InMemoryJetStream,
    *,
    crash: Callable[[], None] = lambda: None,
    **config: Any,
) -> tuple[Relay, CountingMetrics]:
    metrics = CountingMetrics()
    base = RelayConfig(claimer="r1", batch_size=10, max_in_flight=16, timing=_TIMING, poll_interval_seconds=0.05)
    return Relay(store, stream, metrics, replace(base, **config), crash=crash), metrics


@contextlib.asynccontextmanager
async def _running(relay: Relay) -> AsyncIterator[None]:
    """The relay runs for the block, and has stopped when it ends."""
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def _run_until(relay: Relay, done: Callable[[], bool], timeout: float = 5.0) -> None:
    async with _running(relay):
        deadline = asyncio.get_running_loop().time() + timeout
        while not done() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)


async def test_every_row_is_published_once_and_marked_with_its_puback() -> None:
    store, stream = InMemoryOutboxStore(), InMemoryJetStream()
    for row in _rows(50):
        store.add(row)
    relay, metrics = _relay(store, stream)

    await _run_until(relay, lambda: len(store.published()) == 50)

    assert sorted(m.event_id for m in stream.messages) == sorted(store.rows)
    assert {r.stream_seq for r in store.published().values()} == set(range(1, 51))
    assert metrics.published_total == 50 and metrics.duplicates_total == 0


async def test_rows_wait_while_the_stream_is_down_and_go_out_once_it_is_back() -> None:
    store, stream = InMemoryOutboxStore(), InMemoryJetStream()
    stream.set_up(False)
    for row in _rows(5):
        store.add(row)
    relay, _ = _relay(store, stream)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))

    # (the relay is parked waiting for the stream to come back: nothing can have gone out)
    while stream.waits_for_connection == 0:
        await asyncio.sleep(0.01)
    assert store.published() == {} and stream.messages == []
    stream.set_up(True)
    for _ in range(200):
        if len(store.published()) == 5:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await task

    assert len(store.published()) == 5 and len(stream.messages) == 5


async def test_a_lost_puback_is_retried_and_the_duplicate_is_recorded() -> None:
    store, stream = InMemoryOutboxStore(), InMemoryJetStream(lose_acks=True)
    [row] = _rows(1)
    store.add(row)
    relay, metrics = _relay(store, stream)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))

    while metrics.failed_total == 0:
        await asyncio.sleep(0.01)
    stream.lose_acks = False
    while not store.published():
        await asyncio.sleep(0.01)
    stop.set()
    await task

    receipt = store.published()[row.event_id]
    assert receipt.duplicate is True and len(stream.messages) == 1
    assert store.attempts(row.event_id) >= 2


async def test_the_fault_hook_fires_after_the_puback_and_before_the_mark() -> None:
    store, stream = InMemoryOutboxStore(), InMemoryJetStream()
    [row] = _rows(1)
    store.add(row)
    seen: list[tuple[int, int]] = []
    relay, _ = _relay(
        store,
        stream,
        crash_after_first_publish=True,
        crash=lambda: seen.append((len(stream.messages), len(store.published()))),
    )

    await _run_until(relay, lambda: bool(seen))

    assert seen[0] == (1, 0)  # in the stream, not yet marked


async def test_backlog_is_exported_and_old_published_rows_are_pruned() -> None:
    store, stream = InMemoryOutboxStore(), InMemoryJetStream()
    for row in _rows(3):
        store.add(row)
    relay, metrics = _relay(store, stream, retention_seconds=0.0)

    await relay.export_backlog()
    assert metrics.last_backlog is not None and metrics.last_backlog.count == 3
    await _run_until(relay, lambda: len(store.published()) == 3)
    await asyncio.sleep(0.01)
    await relay.prune_once()

    assert store.rows == {} and metrics.pruned_total == 3


class _RecordingStore(InMemoryOutboxStore):
    """Remembers what each settle call carried, and what was still unpublished right after it."""

    def __init__(self) -> None:
        super().__init__()
        self.settled: list[tuple[set[str], set[str], set[str]]] = []

    async def settle(self, receipts: Sequence[PublishReceipt], failed: Sequence[str], *, claimer: str) -> int:
        marked = await super().settle(receipts, failed, claimer=claimer)
        unpublished = {k for k, r in self.rows.items() if r.published is None}
        self.settled.append(({r.event_id for r in receipts}, set(failed), unpublished))
        return marked


async def test_a_batch_is_marked_by_one_settle_once_all_its_pubacks_are_in() -> None:
    store, stream = _RecordingStore(), InMemoryJetStream()
    for row in _rows(50):
        store.add(row)
    relay, _ = _relay(store, stream, batch_size=10, max_in_flight=64)

    await _run_until(relay, lambda: len(store.published()) == 50)

    assert 1 <= store.settle_calls <= 5  # five batches of ten; batches done together share one
    assert all(len(acked) % 10 == 0 for acked, _, _ in store.settled)


async def test_a_failed_puback_leaves_only_its_row_unpublished_and_it_is_retried() -> None:
    store, stream = _RecordingStore(), InMemoryJetStream()
    rows = _rows(10)
    for row in rows:
        store.add(row)
    lost = rows[3].event_id
    stream.lose_ack_once.add(lost)
    relay, metrics = _relay(store, stream, batch_size=10)

    await _run_until(relay, lambda: len(store.published()) == 10)

    acked, failed, unpublished = store.settled[0]
    assert failed == {lost} and unpublished == {lost}
    assert acked == {r.event_id for r in rows} - {lost}
    assert store.published()[lost].duplicate is True  # the re-publish was deduped by the stream
    assert metrics.failed_total == 1


async def test_a_row_whose_puback_failed_is_retried_after_the_backoff_not_the_next_news() -> None:
    # Given a relay that would wait 30 s for news after a short claim, and one row whose PubAck is lost
    store, stream = InMemoryOutboxStore(), InMemoryJetStream()
    row = _rows(1)[0]
    store.add(row)
    stream.lose_ack_once.add(row.event_id)
    relay, metrics = _relay(store, stream, poll_interval_seconds=30.0)

    # When no other row commits, the release of the failed row wakes the relay
    await _run_until(relay, lambda: row.event_id in store.published())

    # Then it went out again within the backoff (0.05 s here), not after the 30 s poll
    assert metrics.failed_total == 1
    assert store.published()[row.event_id].duplicate is True


class _HeldAcks(InMemoryJetStream):
    """Stores what is sent but holds every PubAck until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[Callable[[], None]] = []

    async def publish(self, rows: Sequence[OutboxRow], outcomes: PublishOutcomes) -> None:
        self.messages.extend(rows)
        for index in range(len(rows)):
            seq = len(self.messages) - len(rows) + index + 1
            self.held.append(functools.partial(outcomes.acked, index, seq, False))

    def release(self, count: int) -> None:
        for ack in self.held[:count]:
            ack()
        del self.held[:count]


class _ClaimSizes(InMemoryOutboxStore):
    def __init__(self) -> None:
        super().__init__()
        self.limits: list[int] = []

    async def claim_batch(self, limit: int, *, lease_seconds: float, claimer: str) -> list[OutboxRow]:
        self.limits.append(limit)
        return await super().claim_batch(limit, lease_seconds=lease_seconds, claimer=claimer)


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_a_batch_is_claimed_only_when_the_window_has_room_for_all_of_it() -> None:
    store, stream = _ClaimSizes(), _HeldAcks()
    for row in _rows(30):
        store.add(row)
    relay, _ = _relay(store, stream, batch_size=10, max_in_flight=16)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))

    # With 10 of 16 in flight, 6 slots are free: the relay parks instead of claiming 6 rows
    await _until(lambda: len(stream.messages) == 10 and relay.waiting_for_room)
    assert len(stream.messages) == 10 and store.limits == [10]
    # Once 4 PubAcks are in, 10 slots are: the next claim is a whole batch again, then it parks
    stream.release(4)
    await _until(lambda: len(stream.messages) == 20 and relay.waiting_for_room)
    assert len(stream.messages) == 20 and store.limits == [10, 10]
    while len(store.published()) < 30:
        stream.release(len(stream.held))
        await asyncio.sleep(0.01)
    stop.set()
    await task

    assert set(store.limits) == {10} and sorted(m.event_id for m in stream.messages) == sorted(store.rows)


class _ClaimCounting(InMemoryOutboxStore):
    """Records the size of every claim that found rows, or of every claim with `empty_too`."""

    def __init__(self, *, empty_too: bool = False) -> None:
        super().__init__()
        self.claims: list[int] = []
        self._empty_too = empty_too

    async def claim_batch(self, limit: int, *, lease_seconds: float, claimer: str) -> list[OutboxRow]:
        rows = await super().claim_batch(limit, lease_seconds=lease_seconds, claimer=claimer)
        if rows or self._empty_too:
            self.claims.append(len(rows))
        return rows


async def test_an_idle_relay_woken_by_news_lingers_so_one_claim_takes_the_rows_committed_meanwhile() -> None:
    # Given an idle relay (its first claim found nothing) that lingers 0.5 s after news
    store, stream = _ClaimCounting(), InMemoryJetStream()
    relay, _ = _relay(store, stream, claim_linger_seconds=0.5, poll_interval_seconds=30.0)
    async with _running(relay):
        await _until(lambda: store.waiting)
        # When one row commits, and four more a moment later (while it lingers)
        first, *rest = _rows(5)
        store.add(first)
        await asyncio.sleep(0.05)
        for row in rest:
            store.add(row)
        await _until(lambda: len(store.published()) == 5)
    # Then all five went out in ONE claim (not one claim for the first and another for the rest)
    assert len(store.published()) == 5
    assert store.claims == [5]


async def test_a_claim_short_of_a_batch_waits_for_news_instead_of_claiming_again_at_once() -> None:
    # Given an idle relay (batches of 10) parked on news
    store, stream = _ClaimCounting(empty_too=True), InMemoryJetStream()
    relay, _ = _relay(store, stream, claim_linger_seconds=0.0, poll_interval_seconds=30.0)
    async with _running(relay):
        await _until(lambda: store.waiting)
        # When three rows commit
        for row in _rows(3):
            store.add(row)
        await _until(lambda: len(store.published()) == 3 and store.waiting)
    # Then one claim took them and the relay went back to waiting: no empty claim after a short one
    assert store.claims == [0, 3]


async def test_a_whole_batch_is_followed_by_another_claim_at_once() -> None:
    # Given 25 rows waiting and a relay with batches of 10 that would wait 30 s for news
    store, stream = _ClaimCounting(empty_too=True), InMemoryJetStream()
    for row in _rows(25):
        store.add(row)
    store.news.clear()
    relay, _ = _relay(store, stream, batch_size=10, max_in_flight=40, poll_interval_seconds=30.0)
    # When it runs
    await _run_until(relay, lambda: len(store.published()) == 25 and store.waiting)
    # Then the backlog went out in back-to-back claims, with no news needed between them
    assert store.claims == [10, 10, 5] and len(store.published()) == 25


async def test_news_long_after_the_last_claim_is_claimed_at_once_the_linger_only_spaces_claims() -> None:
    # Given a relay lingering 1 s whose last claim (empty) began longer ago than that
    store, stream = _ClaimCounting(empty_too=True), InMemoryJetStream()
    relay, _ = _relay(store, stream, claim_linger_seconds=1.0, poll_interval_seconds=30.0)
    loop = asyncio.get_running_loop()
    async with _running(relay):
        await _until(lambda: store.waiting)
        await asyncio.sleep(1.1)  # the linger's whole second passes with the relay idle: time itself is the condition
        # When one row commits, and another once the first is out
        first, second = _rows(2)
        committed = loop.time()
        store.add(first)
        await _until(lambda: len(store.published()) == 1)
        first_out = loop.time()
        store.add(second)
        await _until(lambda: len(store.published()) == 2)
        second_out = loop.time()
    # Then the first was claimed on its news, without lingering its second; the second, committed
    # within the linger since that claim, waited out the linger and went in a claim of its own
    assert first_out - committed < 0.9
    assert second_out - first_out > 0.8
    assert store.claims == [0, 1, 1]
