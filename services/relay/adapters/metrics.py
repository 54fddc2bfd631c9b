"""Prometheus metrics of the relay: the outbox backlog and its age (the loop's first health signal)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from services.relay.domain.model import BacklogStats

OUTBOX_BACKLOG = Gauge("memloop_outbox_backlog", "Outbox rows committed and not yet acknowledged by JetStream")
OUTBOX_OLDEST_AGE = Gauge("memloop_outbox_oldest_age_seconds", "Age of the oldest unpublished outbox row")
PUBLISHED = Counter("memloop_relay_published_total", "Events acknowledged by JetStream and marked published")
DUPLICATES = Counter("memloop_relay_duplicates_total", "PubAcks that JetStream flagged as duplicates")
FAILED = Counter("memloop_relay_publish_failures_total", "Publishes that got no PubAck (retried later)")
PRUNED = Counter("memloop_relay_pruned_total", "Published outbox rows deleted after the retention period")


class PrometheusRelayMetrics:
    def published(self, count: int, duplicates: int) -> None:
        PUBLISHED.inc(count)
        DUPLICATES.inc(duplicates)

    def failed(self, count: int) -> None:
        FAILED.inc(count)

    def backlog(self, stats: BacklogStats) -> None:
        OUTBOX_BACKLOG.set(stats.count)
        OUTBOX_OLDEST_AGE.set(stats.oldest_age_seconds)

    def pruned(self, count: int) -> None:
        PRUNED.inc(count)
