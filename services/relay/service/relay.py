"""The relay loop: claim outbox rows, publish them pipelined, mark each published after its PubAck.

Three rules make "exactly once in the stream" hold:

1. A row is claimed with a lease committed before any network call, so no database lock is held
   while publishing, and concurrent relays claim disjoint rows.
2. A row is marked published only after JetStream acknowledged it. A crash in between leaves the
   row claimed; when the lease lapses it is published again and JetStream's duplicate window,
   keyed on `Nats-Msg-Id` = event id, drops the copy (the PubAck says `duplicate`).
3. A failed publish (NATS down, PubAck timeout) releases the row for retry after a backoff (a relay
   waiting for news is woken by the release, then waits the backoff): nothing is ever given up on,
   so nothing is dead-lettered by the relay.

Publishes are pipelined: up to `max_in_flight` await their PubAck at once, and a batch is claimed
only when the window has room for all of it. A claimed batch is settled as a whole once every one
of its PubAcks (or failures) is in: one UPDATE marks its acked rows published and releases only its
failed rows. Settling runs in a separate task (batches that complete together share the UPDATE),
so the database round trip never stalls the publisher.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from services.relay.domain.model import OutboxRow, PublishReceipt, RelayTiming, backoff_seconds
from services.relay.service.ports import OutboxStore, Publisher, RelayMetrics

_log = logging.getLogger(__name__)


def sigkill_self() -> None:
    """The fault hook's crash: as abrupt as a kill -9 from outside (no cleanup, no flush)."""
    os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True)
class RelayConfig:
    """The loop's knobs, from RelaySettings."""

    claimer: str
    batch_size: int = 512
    """Half the default window: a claim walks past the rows still in flight (oldest first, still
    unpublished) before it reaches free ones, so with 1024 in flight and claims of 256 each claimed
    row cost PostgreSQL about four visits; two batches in flight still overlap a claim with the
    PubAcks of the other. bench_relay's throughput phase: PostgreSQL CPU per event 0.82-0.95x."""
    max_in_flight: int = 1024
    timing: RelayTiming = field(default_factory=RelayTiming)
    poll_interval_seconds: float = 5.0
    claim_linger_seconds: float = 0.25
    """When news of a commit wakes an idle relay, it claims no sooner than this long after its last
    claim began, so the rows committed meanwhile go in the same claim. Without it, at serving's
    steady pace every commit was a claim of one row, an empty claim after it and a settle of one:
    three statements and a publish round per event, where a claim of several costs PostgreSQL and
    the relay about what one does. A backlog (a claim of a whole batch) is claimed again at once
    (no news wait, no linger), and the first wake after a quiet spell longer than this claims at
    once; only learning waits, never a reply. 250 ms, not the 20 ms it was: at 50 commits/s 20 ms
    saved nothing (claims were that far apart already), 250 ms cut the relay's CPU per event
    1.55 -> 0.45 ms and PostgreSQL's 0.98 -> 0.60 (`bench/bench_relay_linger.py --rate 50`), and
    nats-server's and the worker's with it (fewer, fuller deliveries); the cost is at most 250 ms
    more before an event is published, beside the worker's batch window of up to 1 s."""
    retention_seconds: float = 7 * 24 * 3600.0
    prune_interval_seconds: float = 60.0
    prune_batch: int = 5000
    metrics_interval_seconds: float = 2.0
    crash_after_first_publish: bool = False


class Relay:
    """One relay process's loop. `run(stop)` returns after `stop` is set and in-flight acks drained."""

    def __init__(
        self,
        store: OutboxStore,
        publisher: Publisher,
        metrics: RelayMetrics,
        config: RelayConfig,
        *,
        crash: Callable[[], None] = sigkill_self,
    ) -> None:
        self._store = store
        self._publisher = publisher
        self._metrics = metrics
        self._config = config
        self._crash = crash
        self._in_flight = 0
        self._slot_free = asyncio.Event()
        self._waiting_for_room = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._receipts: list[PublishReceipt] = []
        self._failed: list[str] = []
        self._marks_waiting = asyncio.Event()
        self._released = asyncio.Event()
        """Set when failed rows went back to the outbox: they are news the database never announces
        (no commit of serving's), so a relay waiting for news would leave them for the poll."""
        self._batch_size = max(1, min(config.batch_size, config.max_in_flight))
        self._consecutive_failures = 0
        self._claimed_at = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        background = [
            asyncio.create_task(self._mark_loop(), name="relay-mark"),
            asyncio.create_task(self._every(self._config.prune_interval_seconds, self.prune_once), name="relay-prune"),
            asyncio.create_task(
                self._every(self._config.metrics_interval_seconds, self.export_backlog), name="relay-metrics"
            ),
        ]
        try:
            while not stop.is_set():
                await self.publish_round(stop)
        finally:
            await self._drain()
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)

    async def publish_round(self, stop: asyncio.Event) -> int:
        """Claim one batch and send it; after a claim short of a batch (the outbox is drained), wait
        for news of a commit the claim did not see, then linger. Returns rows sent.

        Claiming again at once after a short claim took, at serving's steady pace, the one or two
        rows committed during the claim and then nothing: three claims per linger where one does."""
        if not await self._ready(stop):
            return 0
        self._claimed_at = asyncio.get_running_loop().time()
        self._released.clear()
        try:
            rows = await self._store.claim_batch(
                self._batch_size, lease_seconds=self._config.timing.lease_seconds, claimer=self._config.claimer
            )
        except Exception:
            _log.warning("claiming outbox rows failed; retrying", exc_info=True)
            self._consecutive_failures += 1
            return 0
        if rows:
            self._in_flight += len(rows)
            self._idle.clear()
            await self._publisher.publish(rows, _Batch(self, rows))
        if len(rows) < self._batch_size:
            await _first_of(self._news_then_linger(), self._released.wait(), stop.wait())
        return len(rows)

    async def _news_then_linger(self) -> None:
        """Wait for news (or the poll interval), then until `claim_linger_seconds` after the last
        claim began: the linger spaces claims, so the time already spent claiming and waiting for
        news counts towards it (at a steady pace claims are that far apart, not linger + claim)."""
        if await self._store.wait_for_new_rows(self._config.poll_interval_seconds):
            rest = self._claimed_at + self._config.claim_linger_seconds - asyncio.get_running_loop().time()
            if rest > 0:
                await asyncio.sleep(rest)

    async def _ready(self, stop: asyncio.Event) -> bool:
        """Wait out a backoff, a NATS outage and a window without room for a whole batch; False
        when stopping instead. Waiting for a batch's worth of room, not one slot, keeps claims (and
        so marks) full-sized: a claim of a few rows costs PostgreSQL nearly what one of 512 does."""
        pause = backoff_seconds(self._consecutive_failures, maximum=self._config.timing.backoff_max_seconds)
        if pause:
            await _first_of(asyncio.sleep(pause), stop.wait())
        if not self._publisher.connected:
            _log.info("NATS unavailable: %d rows in flight, waiting to reconnect", self._in_flight)
            await _first_of(self._publisher.wait_connected(), stop.wait())
        while not self._room() and not stop.is_set():
            self._slot_free.clear()
            self._waiting_for_room = True
            await _first_of(self._slot_free.wait(), stop.wait())
        self._waiting_for_room = False
        return not stop.is_set() and self._publisher.connected

    @property
    def waiting_for_room(self) -> bool:
        """Whether the relay is parked until its window can take a whole batch (nothing is claimed
        meanwhile): what a test or an operator's debugger can observe instead of guessing by time."""
        return self._waiting_for_room

    def _room(self) -> bool:
        return self._in_flight + self._batch_size <= self._config.max_in_flight

    def _settled(self, row: OutboxRow, ok: bool) -> None:
        """Per message: free its window slot and track failures; marking waits for the batch."""
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()
        if self._room():
            self._slot_free.set()
        if not ok:
            _log.debug("publish of %s failed", row.event_id)
            self._consecutive_failures += 1
            return
        if self._config.crash_after_first_publish:
            _log.warning("fault hook: crashing after the PubAck of %s, before marking it", row.event_id)
            self._crash()
        self._consecutive_failures = 0

    def _batch_done(self, batch: _Batch) -> None:
        """Every PubAck of the batch is in (or failed): hand the whole batch to the mark task."""
        self._receipts.extend(batch.receipts)
        self._failed.extend(batch.failed_ids)
        self._marks_waiting.set()

    async def _mark_loop(self) -> None:
        while True:
            await self._marks_waiting.wait()
            await self.flush_marks()

    async def flush_marks(self) -> None:
        """Settle every completed batch so far: one UPDATE marks the acked rows, releases the failed.

        A failure to record keeps them for the next attempt: they are only lost if the process
        dies, and then the lease lapses and JetStream dedupes the re-publish.
        """
        self._marks_waiting.clear()
        receipts, self._receipts = self._receipts, []
        failed, self._failed = self._failed, []
        if not receipts and not failed:
            return
        try:
            await self._store.settle(receipts, failed, claimer=self._config.claimer)
            if receipts:
                self._metrics.published(len(receipts), sum(r.duplicate for r in receipts))
            if failed:
                self._metrics.failed(len(failed))
                self._released.set()
        except Exception:
            _log.warning("recording %d PubAcks failed; will retry", len(receipts), exc_info=True)
            self._receipts[:0] = receipts
            self._failed[:0] = failed
            await asyncio.sleep(0.5)
            self._marks_waiting.set()

    async def _drain(self) -> None:
        """On stop: let in-flight PubAcks arrive (bounded by the publish timeout), then mark them."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self._config.timing.publish_timeout_seconds + 1.0)
        with contextlib.suppress(Exception):
            await self.flush_marks()

    async def prune_once(self) -> None:
        total = 0
        while True:
            pruned = await self._store.prune_published(
                older_than_seconds=self._config.retention_seconds, limit=self._config.prune_batch
            )
            total += pruned
            if pruned < self._config.prune_batch:
                break
        if total:
            self._metrics.pruned(total)

    async def export_backlog(self) -> None:
        self._metrics.backlog(await self._store.backlog())

    async def _every(self, seconds: float, job: Callable[[], Awaitable[None]]) -> None:
        while True:
            try:
                await job()
            except Exception:
                _log.warning("relay housekeeping failed", exc_info=True)
            await asyncio.sleep(seconds)


class _Batch:
    """One claimed batch on its way to the stream, and what has come back of it so far.

    It is the publisher's `PublishOutcomes` for the batch's rows: two plain callbacks per message,
    no future, task or timer per message (at thousands of events/s those cost more than the
    publish itself). The batch is handed to the mark task once its last row is reported.
    """

    __slots__ = ("_left", "_relay", "failed_ids", "receipts", "rows")

    def __init__(self, relay: Relay, rows: list[OutboxRow]) -> None:
        self._relay = relay
        self.rows = rows
        self.receipts: list[PublishReceipt] = []
        self.failed_ids: list[str] = []
        self._left = len(rows)

    def acked(self, index: int, stream_seq: int, duplicate: bool) -> None:
        row = self.rows[index]
        self.receipts.append(PublishReceipt(row.event_id, stream_seq, duplicate, datetime.now(UTC)))
        self._relay._settled(row, True)
        self._one_done()

    def failed(self, index: int, error: BaseException) -> None:
        row = self.rows[index]
        self.failed_ids.append(row.event_id)
        self._relay._settled(row, False)
        self._one_done()

    def _one_done(self) -> None:
        self._left -= 1
        if self._left == 0:
            self._relay._batch_done(self)


async def _first_of(*awaitables: Awaitable[object]) -> None:
    """Wait until any of the awaitables completes; cancel the rest."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
