"""Reads the request path's pressure from serving's and the relay's Prometheus endpoints.

Serving's p99 is taken over the interval since the previous scrape, from the deltas of the
`memloop_rpc_seconds` histogram buckets of the agent-facing RPCs (the loop's own calls to serving,
ReadContent and the deletion ones, and health checks are left out: they would measure the worker
itself). The outbox age is the relay's `memloop_outbox_oldest_age_seconds` gauge. A scrape that
fails yields "unknown", which the controller treats as quiet.
"""

from __future__ import annotations

import asyncio
import logging
import math
import urllib.request
from collections.abc import Sequence

from prometheus_client import Gauge
from prometheus_client.parser import text_string_to_metric_families

from services.worker.service.backpressure import AimdLimit, Pressure, PressureSignal

_log = logging.getLogger(__name__)
LOOP_METHODS = frozenset({"Check", "Watch", "ReadContent", "DeleteContent", "GetOutboxEvent"})

CONCURRENCY_LIMIT = Gauge("memloop_worker_concurrency_limit", "Events the worker may have in flight now (AIMD)")
SERVING_P99 = Gauge("memloop_worker_seen_serving_p99_seconds", "Serving's p99 over the last interval, as read")


def _histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile over cumulative (upper bound, count) pairs, sorted."""
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            if math.isinf(upper):
                return lower
            return lower + (upper - lower) * (rank - below) / max(count - below, 1e-12)
        lower, below = upper, count
    return lower


class MetricsPressure:
    """`read()` scrapes the given endpoints (any of them may be serving's or the relay's)."""

    def __init__(self, urls: Sequence[str], *, timeout: float = 1.0) -> None:
        self._urls, self._timeout = list(urls), timeout
        self._previous: dict[float, float] = {}

    async def read(self) -> Pressure:
        texts = await asyncio.gather(*(asyncio.to_thread(self._fetch, url) for url in self._urls))
        buckets: dict[float, float] = {}
        ages: list[float] = []
        for text in texts:
            if text is not None:
                self._parse(text, buckets, ages)
        return Pressure(serving_p99_seconds=self._window_p99(buckets), outbox_age_seconds=max(ages, default=None))

    def _fetch(self, url: str) -> str | None:
        try:
            with urllib.request.urlopen(url, timeout=self._timeout) as response:
                return bytes(response.read()).decode()
        except (OSError, ValueError) as exc:
            _log.debug("pressure scrape of %s failed (%s)", url, exc)
            return None

    @staticmethod
    def _parse(text: str, buckets: dict[float, float], ages: list[float]) -> None:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "memloop_outbox_oldest_age_seconds":
                    ages.append(float(sample.value))
                elif (
                    sample.name == "memloop_rpc_seconds_bucket"
                    and sample.labels.get("service") == "serving"
                    and sample.labels.get("method") not in LOOP_METHODS
                ):
                    upper = float(sample.labels["le"])
                    buckets[upper] = buckets.get(upper, 0.0) + float(sample.value)

    def _window_p99(self, buckets: dict[float, float]) -> float | None:
        previous, self._previous = self._previous, buckets
        if not buckets:
            return None
        window = sorted((upper, count - previous.get(upper, 0.0)) for upper, count in buckets.items())
        return _histogram_quantile(0.99, window)


async def control(limit: AimdLimit, signal: PressureSignal, interval: float, stop: asyncio.Event) -> None:
    """Every `interval`, read the signal and step the limit; publish both as metrics."""
    CONCURRENCY_LIMIT.set(limit.value)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
            return
        except TimeoutError:
            pass
        pressure = await signal.read()
        if pressure.serving_p99_seconds is not None:
            SERVING_P99.set(pressure.serving_p99_seconds)
        before = limit.value
        CONCURRENCY_LIMIT.set(limit.observe(pressure))
        if limit.value != before:
            _log.info("back-pressure: in-flight limit %d -> %d (%s)", before, limit.value, pressure)
