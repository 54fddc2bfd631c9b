"""The relay loop: claim outbox rows, publish them pipelined, mark each published after its PubAck.

Three rules make "exactly once in the stream" hold:

1. A row is claimed with a lease committed before any network call, so no database lock is held
   while publishing, and concurrent relays claim disjoint rows.
2. A row is marked published only after JetStream acknowledged it. A crash in between leaves the
   row claimed; when the lease lapses it is published again and JetStream's duplicate window,
   keyed on `Nats-Msg-Id` = event id, drops the copy (the PubAck says `duplicate`).
3. A failed publish (NATS down, PubAck timeout) releases the row for retry after a backoff:
   nothing is ever given up on, so nothing is dead-lettered by the relay.

Publishes are pipelined: up to `max_in_flight` await their PubAck at once. A claimed batch is
settled as a whole once every one of its PubAcks (or failures) is in: one UPDATE marks its acked
rows published and releases only its failed rows. Settling runs in a separate task (batches that
complete together share the UPDATE), so the database round trip never stalls the publisher.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

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
    batch_size: int = 256
    max_in_flight: int = 1024
    timing: RelayTiming = field(default_factory=RelayTiming)
    poll_interval_seconds: float = 5.0
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
        self._idle = asyncio.Event()
        self._idle.set()
        self._receipts: list[PublishReceipt] = []
        self._failed: list[str] = []
        self._marks_waiting = asyncio.Event()
        self._batches: set[asyncio.Task[None]] = set()
        self._consecutive_failures = 0

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
        """Claim one batch and send it; wait for news when there is none. Returns rows sent."""
        if not await self._ready(stop):
            return 0
        limit = min(self._config.batch_size, self._config.max_in_flight - self._in_flight)
        try:
            rows = await self._store.claim_batch(
                limit, lease_seconds=self._config.timing.lease_seconds, claimer=self._config.claimer
            )
        except Exception:
            _log.warning("claiming outbox rows failed; retrying", exc_info=True)
            self._consecutive_failures += 1
            return 0
        if not rows:
            await _first_of(self._store.wait_for_new_rows(self._config.poll_interval_seconds), stop.wait())
            return 0
        futures = [await self._send(row) for row in rows]
        task = asyncio.create_task(self._collect(rows, futures), name="relay-batch")
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)
        return len(rows)

    async def _ready(self, stop: asyncio.Event) -> bool:
        """Wait out a backoff, a NATS outage and a full window; False when stopping instead."""
        pause = backoff_seconds(self._consecutive_failures, maximum=self._config.timing.backoff_max_seconds)
        if pause:
            await _first_of(asyncio.sleep(pause), stop.wait())
        if not self._publisher.connected:
            _log.info("NATS unavailable: %d rows in flight, waiting to reconnect", self._in_flight)
            await _first_of(self._publisher.wait_connected(), stop.wait())
        while self._in_flight >= self._config.max_in_flight and not stop.is_set():
            self._slot_free.clear()
            await _first_of(self._slot_free.wait(), stop.wait())
        return not stop.is_set() and self._publisher.connected

    async def _send(self, row: OutboxRow) -> asyncio.Future[PublishReceipt]:
        """Publish one row; the returned future holds its PubAck or its failure (never raises)."""
        self._in_flight += 1
        self._idle.clear()
        try:
            future = await self._publisher.send(row)
        except Exception as exc:
            future = asyncio.get_running_loop().create_future()
            future.set_exception(exc)
        future.add_done_callback(functools.partial(self._on_ack, row))
        return future

    def _on_ack(self, row: OutboxRow, future: asyncio.Future[PublishReceipt]) -> None:
        """Per message: free its window slot and track failures; marking waits for the batch."""
        self._in_flight -= 1
        self._slot_free.set()
        if self._in_flight == 0:
            self._idle.set()
        if future.cancelled() or future.exception() is not None:
            _log.debug("publish of %s failed", row.event_id)
            self._consecutive_failures += 1
            return
        if self._config.crash_after_first_publish:
            _log.warning("fault hook: crashing after the PubAck of %s, before marking it", row.event_id)
            self._crash()
        self._consecutive_failures = 0

    async def _collect(self, rows: list[OutboxRow], futures: list[asyncio.Future[PublishReceipt]]) -> None:
        """Once every PubAck of the batch is in (or failed), hand the whole batch to the mark task."""
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
        for row, outcome in zip(rows, outcomes, strict=True):
            if isinstance(outcome, PublishReceipt):
                self._receipts.append(outcome)
            else:
                self._failed.append(row.event_id)
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
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._batches, return_exceptions=True), 1.0)
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
