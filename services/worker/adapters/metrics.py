"""The worker's Prometheus metrics and the poller that reads queue figures from JetStream.

Queue depth and age come from the consumer's own info (not from counting in this process), so
they are right with any number of worker replicas and across restarts.
"""

from __future__ import annotations

import asyncio
import logging

from nats.js import JetStreamContext
from prometheus_client import Counter, Gauge, Histogram

from services.worker.adapters.jetstream import StreamNames, read_backlog

_log = logging.getLogger(__name__)

CONSUMER_PENDING = Gauge("memloop_worker_consumer_pending", "Learning events not yet delivered to a worker")
CONSUMER_ACK_PENDING = Gauge(
    "memloop_worker_consumer_ack_pending", "Learning events delivered and not yet acknowledged (in flight or retrying)"
)
OLDEST_PENDING_AGE = Gauge(
    "memloop_worker_consumer_oldest_pending_age_seconds", "Age of the oldest unacknowledged learning event"
)
DLQ_DEPTH = Gauge("memloop_worker_dlq_depth", "Events waiting in the dead-letter stream")
DECISIONS = Counter("memloop_worker_decisions_total", "Policy decisions applied by memory, by outcome", ["outcome"])
DELIVERIES = Counter(
    "memloop_worker_deliveries_total",
    "Deliveries handled, by result (processed, duplicate, retry, dead_lettered)",
    ["result"],
)
DEAD_LETTERS = Counter("memloop_worker_dead_letters_total", "Events dead-lettered, by reason", ["reason"])
PROCESSING_SECONDS = Histogram(
    "memloop_worker_processing_seconds",
    "Time from delivery to ack/nak/dead-letter of one event, by result",
    ["result"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)

EMPTY_PULLS = Counter("memloop_worker_empty_pulls_total", "Pulls that expired without a message (the worker was idle)")
BATCH_SIZE = Histogram(
    "memloop_worker_batch_size",
    "Messages per pulled batch (each batch: one content read, one policy call per tenant)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)


async def poll_backlog(js: JetStreamContext, names: StreamNames, consumer: str, interval: float) -> None:
    """Refresh the queue gauges every `interval` seconds until cancelled; a failed poll is logged, not fatal."""
    while True:
        try:
            backlog = await read_backlog(js, names, consumer)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.warning("backlog poll failed: %s", type(exc).__name__)
        else:
            CONSUMER_PENDING.set(backlog.pending)
            CONSUMER_ACK_PENDING.set(backlog.ack_pending)
            OLDEST_PENDING_AGE.set(backlog.oldest_age_seconds)
            DLQ_DEPTH.set(backlog.dlq_depth)
        await asyncio.sleep(interval)
