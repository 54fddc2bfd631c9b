"""What the relay loop needs from the outside: the outbox, a publisher, and somewhere to count.

Real adapters: `adapters.pg_outbox` (psycopg async, LISTEN/NOTIFY), `adapters.jetstream` (nats-py),
`adapters.metrics` (Prometheus). In-memory ones for unit tests: `adapters.in_memory`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from services.relay.domain.model import BacklogStats, OutboxRow, PublishReceipt


class OutboxStore(Protocol):
    async def claim_batch(self, limit: int, *, lease_seconds: float, claimer: str) -> list[OutboxRow]:
        """Lease up to `limit` unpublished, unleased rows (oldest first) and commit the lease.

        Rows leased by another live relay are skipped, never waited for (SKIP LOCKED), so relays
        claim disjoint sets. No lock is held once this returns. News that arrived before the claim
        is forgotten (the claim sees those rows): `wait_for_new_rows` then waits for commits the
        claim may have missed, not for the ones it took.
        """
        ...

    async def mark_published(self, receipts: Sequence[PublishReceipt]) -> int:
        """Record PubAcks (seq, duplicate, time) on rows not yet marked; returns rows changed."""
        ...

    async def release(self, event_ids: Sequence[str], *, claimer: str) -> None:
        """Give up this relay's lease on rows whose publish failed, so they are retried at once."""
        ...

    async def settle(self, receipts: Sequence[PublishReceipt], failed: Sequence[str], *, claimer: str) -> int:
        """`mark_published(receipts)` and `release(failed)` as ONE statement; returns rows marked.

        A failed row stays unpublished (only its lease is given up); an id in both lists counts as
        published (a retry of it succeeded).
        """
        ...

    async def prune_published(self, *, older_than_seconds: float, limit: int) -> int:
        """Delete up to `limit` rows published longer ago than `older_than_seconds`."""
        ...

    async def backlog(self) -> BacklogStats: ...

    async def wait_for_new_rows(self, timeout: float) -> bool:
        """Wait for a NOTIFY from serving (True) or the timeout (False), whichever is first.

        A notification that arrived since the last call or claim returns at once, so none is lost.
        """
        ...


class PublishOutcomes(Protocol):
    """Where a publisher reports each row of a batch: its PubAck, or why none came.

    Called on the event loop's thread, from plain callbacks: an implementation must not block.
    """

    def acked(self, index: int, stream_seq: int, duplicate: bool) -> None:
        """JetStream stored `rows[index]` at `stream_seq` (`duplicate`: it already had it)."""
        ...

    def failed(self, index: int, error: BaseException) -> None:
        """`rows[index]` got no PubAck: not sent, refused, or nothing within the publish timeout."""
        ...


class Publisher(Protocol):
    @property
    def connected(self) -> bool: ...

    async def wait_connected(self) -> None:
        """Return once the connection to NATS is up (immediately when it is)."""
        ...

    async def publish(self, rows: Sequence[OutboxRow], outcomes: PublishOutcomes) -> None:
        """Send `rows` in order without waiting for their PubAcks; never raises.

        Every row is reported to `outcomes` exactly once, during this call or after it: `acked`
        when its PubAck arrives, `failed` when it cannot be sent or no PubAck arrives within the
        publish timeout (it may still have reached the stream: that is what dedupe is for).
        """
        ...


class RelayMetrics(Protocol):
    def published(self, count: int, duplicates: int) -> None: ...

    def failed(self, count: int) -> None: ...

    def backlog(self, stats: BacklogStats) -> None: ...

    def pruned(self, count: int) -> None: ...
