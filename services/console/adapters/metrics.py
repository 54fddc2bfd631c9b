"""Health figures from the services' Prometheus endpoints: outbox age and backlog (relay), consumer
lag and DLQ depth (worker). Read over HTTP the way Prometheus would, parsed with prometheus_client's
own parser, so the console shows exactly what an alert would see."""

from __future__ import annotations

import asyncio
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from services.console.ports import HealthFigure

# metric name -> label the page shows
WATCHED = {
    "memloop_outbox_oldest_age_seconds": "Outbox: age of the oldest unpublished row (s)",
    "memloop_outbox_backlog": "Outbox: rows not yet acknowledged by JetStream",
    "memloop_worker_consumer_pending": "Consumer lag: events not yet delivered to a worker",
    "memloop_worker_consumer_ack_pending": "Consumer: delivered, not yet acknowledged",
    "memloop_worker_consumer_oldest_pending_age_seconds": "Consumer lag: age of the oldest pending event (s)",
    "memloop_worker_dlq_depth": "Dead-letter queue depth",
}


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=3) as response:
        return str(response.read().decode("utf-8"))


def parse_figures(service: str, text: str) -> list[HealthFigure]:
    figures = []
    for family in text_string_to_metric_families(text):
        if family.name in WATCHED:
            value = sum(sample.value for sample in family.samples if sample.name == family.name)
            figures.append(HealthFigure(service, family.name, WATCHED[family.name], value))
    return figures


class HttpMetricsReader:
    def __init__(self, targets: tuple[tuple[str, str], ...]) -> None:
        self._targets = targets

    async def _one(self, service: str, url: str) -> list[HealthFigure]:
        try:
            text = await asyncio.to_thread(_fetch, url)
        except OSError as exc:
            return [HealthFigure(service, "unreachable", f"metrics at {url}", None, str(exc))]
        return parse_figures(service, text)

    async def figures(self) -> list[HealthFigure]:
        results = await asyncio.gather(*(self._one(name, url) for name, url in self._targets))
        return [figure for figures in results for figure in figures]
