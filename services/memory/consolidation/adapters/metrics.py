"""Prometheus metrics of consolidation jobs (served by the common metrics endpoint).

Jobs by final state, their duration, and the report's figures summed: `retired` without `kept`
growing, or `untouched` never moving while turns arrive, is what a job quietly losing writes
would look like, so the figures are exported, not only logged.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.memory.consolidation.service.ports import ConsolidationJob

JOBS = Counter(
    "memloop_consolidation_jobs_total", "Consolidation jobs, by final state and trigger", ["state", "trigger"]
)
DURATION = Histogram(
    "memloop_consolidation_job_seconds",
    "Consolidation job wall time (lock to commit), by final state",
    ["state"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0),
)
FIGURES = Counter(
    "memloop_consolidation_memories_total",
    "Report figures of completed jobs: kept, retired, untouched, deferred, sent_to_review",
    ["figure"],
)

SCHEDULER_RUNNING = Gauge(
    "memloop_consolidation_scheduler_running",
    "1 while this process runs the sleep-time consolidation scheduler (one process of a replica: ingestion)",
)


class PrometheusConsolidationMetrics:
    def scheduler_running(self, running: bool) -> None:
        SCHEDULER_RUNNING.set(1 if running else 0)

    def job_finished(self, job: ConsolidationJob, seconds: float) -> None:
        JOBS.labels(job.state.value, job.trigger.value).inc()
        DURATION.labels(job.state.value).observe(seconds)
        for figure in ("kept", "retired", "untouched", "deferred", "sent_to_review"):
            FIGURES.labels(figure).inc(getattr(job, figure))
