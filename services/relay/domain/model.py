"""The relay's vocabulary: outbox rows, PubAck receipts, subjects, and its timing contract.

Standard library only. The timing contract is the one thing here that is subtle: a re-publish of
an event is harmless only while JetStream still remembers its `Nats-Msg-Id`, so the stream's
duplicate window must outlast every way the relay can publish one event twice (`RelayTiming`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_SUBJECT_TOKEN_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]")


@dataclass(frozen=True)
class OutboxRow:
    """An unpublished event the relay has claimed (it holds the lease until `claimed_until`)."""

    event_id: str
    tenant: str
    trace_id: str
    span_id: str
    payload: bytes
    created_at: datetime


@dataclass(frozen=True)
class PublishReceipt:
    """JetStream's PubAck for one event: proof it is stored, and whether it was already there."""

    event_id: str
    stream_seq: int
    duplicate: bool
    acked_at: datetime


@dataclass(frozen=True)
class BacklogStats:
    """Unpublished rows and the age of the oldest, as the metrics export them."""

    count: int
    oldest_age_seconds: float


def subject_for(prefix: str, tenant: str) -> str:
    """`<prefix>.learning.<tenant>`; characters a subject token cannot hold become `_`.

    The subject only routes; the tenant of record is inside the payload.
    """
    return f"{prefix}.learning.{_SUBJECT_TOKEN_UNSAFE.sub('_', tenant) or '_'}"


def stream_subjects(prefix: str) -> list[str]:
    return [f"{prefix}.learning.>"]


def backoff_seconds(consecutive_failures: int, *, base: float = 0.1, maximum: float = 5.0) -> float:
    """Exponential pause before claiming again after failed publishes; 0 after a success."""
    if consecutive_failures <= 0:
        return 0.0
    return float(min(maximum, base * 2 ** min(consecutive_failures - 1, 16)))


class TimingError(ValueError):
    """The relay's settings would let a re-publish fall outside JetStream's duplicate window."""


@dataclass(frozen=True)
class RelayTiming:
    """How long one event can be in flight, and the duplicate window that must cover it.

    * `lease_seconds` — a claimed row is invisible to other relays this long; if its relay dies
      (or stalls) the row becomes claimable again only after it lapses.
    * `publish_timeout_seconds` — how long a PubAck is awaited before the attempt counts as failed
      (the message may still have reached the stream: that is why dedupe is needed at all).
    * `backoff_max_seconds` — the longest pause between attempts while NATS is unreachable.
    * `retry_horizon_seconds` — the longest time, from an event's first publish reaching the
      stream, within which the relay fleet may publish it again without an operator's hand: a lost
      PubAck (timeout), a lease lapsing after a crash, a backoff, and a supervised restart. It must
      cover lease + timeout + backoff; the default (600 s) leaves room for a restart.
    * `duplicate_window_seconds` — the stream's `duplicate_window`; must be longer than the retry
      horizon (default 3600 s), so every re-publish within the horizon is dropped by JetStream.
      A re-publish after a longer outage of every relay is still harmless downstream (memory
      deduplicates on event_id), but would appear twice in the stream.
    """

    lease_seconds: float = 30.0
    publish_timeout_seconds: float = 5.0
    backoff_max_seconds: float = 5.0
    retry_horizon_seconds: float = 600.0
    duplicate_window_seconds: float = 3600.0

    def check(self) -> RelayTiming:
        """Return self when consistent; raise TimingError naming the broken inequality."""
        if min(self.lease_seconds, self.publish_timeout_seconds, self.backoff_max_seconds) <= 0:
            raise TimingError("lease, publish timeout and backoff must be positive")
        if self.lease_seconds <= self.publish_timeout_seconds:
            raise TimingError(
                f"lease ({self.lease_seconds:g} s) must exceed the publish timeout "
                f"({self.publish_timeout_seconds:g} s), or rows are re-claimed while their PubAck is awaited"
            )
        needed = self.lease_seconds + self.publish_timeout_seconds + self.backoff_max_seconds
        if self.retry_horizon_seconds < needed:
            raise TimingError(
                f"retry horizon ({self.retry_horizon_seconds:g} s) must cover lease + publish timeout + "
                f"backoff ({needed:g} s)"
            )
        if self.duplicate_window_seconds <= self.retry_horizon_seconds:
            raise TimingError(
                f"duplicate window ({self.duplicate_window_seconds:g} s) must be longer than the retry "
                f"horizon ({self.retry_horizon_seconds:g} s)"
            )
        return self
