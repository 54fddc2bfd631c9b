"""In-memory outbox and JetStream stand-ins with the real ones' semantics, for unit tests of the loop.

`InMemoryOutboxStore` leases and marks like the SQL (expired leases are claimable again; a row is
marked once). `InMemoryJetStream` deduplicates on the message id like a duplicate window, can be
taken "down" (sends fail, nothing is stored) and can lose PubAcks (stored, but no ack arrives).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from services.relay.domain.model import BacklogStats, OutboxRow, PublishReceipt
from services.relay.service.ports import PublishOutcomes


@dataclass
class _Row:
    row: OutboxRow
    claimed_until: float = 0.0
    claimed_by: str = ""
    published: PublishReceipt | None = None
    attempts: int = 0


@dataclass
class InMemoryOutboxStore:
    rows: dict[str, _Row] = field(default_factory=dict)
    news: asyncio.Event = field(default_factory=asyncio.Event)
    settle_calls: int = 0
    waiting: bool = False
    """Whether the relay is parked in `wait_for_new_rows`: what a test waits on instead of a sleep."""

    def add(self, row: OutboxRow) -> None:
        self.rows[row.event_id] = _Row(row)
        self.news.set()

    def published(self) -> dict[str, PublishReceipt]:
        return {k: r.published for k, r in self.rows.items() if r.published is not None}

    def attempts(self, event_id: str) -> int:
        return self.rows[event_id].attempts

    async def claim_batch(self, limit: int, *, lease_seconds: float, claimer: str) -> list[OutboxRow]:
        self.news.clear()
        now = time.monotonic()
        free = [r for r in self.rows.values() if r.published is None and r.claimed_until < now]
        free.sort(key=lambda r: r.row.created_at)
        for r in free[:limit]:
            r.claimed_until, r.claimed_by, r.attempts = now + lease_seconds, claimer, r.attempts + 1
        return [r.row for r in free[:limit]]

    async def mark_published(self, receipts: Sequence[PublishReceipt]) -> int:
        changed = 0
        for receipt in receipts:
            r = self.rows[receipt.event_id]
            if r.published is None:
                r.published, r.claimed_until, changed = receipt, 0.0, changed + 1
        return changed

    async def release(self, event_ids: Sequence[str], *, claimer: str) -> None:
        for event_id in event_ids:
            r = self.rows[event_id]
            if r.claimed_by == claimer and r.published is None:
                r.claimed_until = 0.0

    async def settle(self, receipts: Sequence[PublishReceipt], failed: Sequence[str], *, claimer: str) -> int:
        self.settle_calls += 1
        marked = await self.mark_published(receipts)
        await self.release(failed, claimer=claimer)
        return marked

    async def prune_published(self, *, older_than_seconds: float, limit: int) -> int:
        cutoff = datetime.now(UTC).timestamp() - older_than_seconds
        old = [k for k, r in self.rows.items() if r.published and r.published.acked_at.timestamp() < cutoff]
        for key in old[:limit]:
            del self.rows[key]
        return len(old[:limit])

    async def backlog(self) -> BacklogStats:
        pending = [r.row.created_at for r in self.rows.values() if r.published is None]
        age = (datetime.now(UTC) - min(pending)).total_seconds() if pending else 0.0
        return BacklogStats(len(pending), age)

    async def wait_for_new_rows(self, timeout: float) -> bool:
        self.waiting = True
        try:
            await asyncio.wait_for(self.news.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self.waiting = False
        self.news.clear()
        return True


@dataclass
class InMemoryJetStream:
    """A stream that dedupes on event id forever (an infinite duplicate window)."""

    messages: list[OutboxRow] = field(default_factory=list)
    up: bool = True
    lose_acks: bool = False
    lose_ack_once: set[str] = field(default_factory=set)
    """Event ids whose next PubAck is lost (the message still lands in the stream)."""
    waits_for_connection: int = 0
    """How often a publisher found the stream down and waited for it: an observable fact for tests."""
    _seq_by_id: dict[str, int] = field(default_factory=dict)
    _up_event: asyncio.Event = field(default_factory=asyncio.Event)

    def set_up(self, up: bool) -> None:
        self.up = up
        if up:
            self._up_event.set()
        else:
            self._up_event.clear()

    @property
    def connected(self) -> bool:
        return self.up

    async def wait_connected(self) -> None:
        if not self.up:
            self.waits_for_connection += 1
            await self._up_event.wait()

    async def publish(self, rows: Sequence[OutboxRow], outcomes: PublishOutcomes) -> None:
        for index, row in enumerate(rows):
            if not self.up:
                outcomes.failed(index, TimeoutError("no PubAck: NATS is down"))
                continue
            duplicate = row.event_id in self._seq_by_id
            if not duplicate:
                self.messages.append(row)
                self._seq_by_id[row.event_id] = len(self.messages)
            if self.lose_acks or row.event_id in self.lose_ack_once:
                self.lose_ack_once.discard(row.event_id)
                outcomes.failed(index, TimeoutError("PubAck lost"))
            else:
                outcomes.acked(index, self._seq_by_id[row.event_id], duplicate)


@dataclass
class CountingMetrics:
    published_total: int = 0
    duplicates_total: int = 0
    failed_total: int = 0
    pruned_total: int = 0
    last_backlog: BacklogStats | None = None

    def published(self, count: int, duplicates: int) -> None:
        self.published_total += count
        self.duplicates_total += duplicates

    def failed(self, count: int) -> None:
        self.failed_total += count

    def backlog(self, stats: BacklogStats) -> None:
        self.last_backlog = stats

    def pruned(self, count: int) -> None:
        self.pruned_total += count
