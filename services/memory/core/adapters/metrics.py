"""Prometheus metrics of the memory service (served by the common metrics endpoint)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

DECISIONS = Counter("memloop_memory_decisions_total", "Decisions applied, by outcome", ["outcome"])
REPEATS = Counter("memloop_memory_event_repeats_total", "ApplyLearning calls for an already processed event")
CONFLICT_RETRIES = Counter("memloop_memory_conflict_retries_total", "Transactions retried after a lost race")
RETRIEVAL = Histogram(
    "memloop_retrieval_seconds",
    "SearchMemories latency",
    ["cache"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
EMBEDDED = Counter(
    "memloop_embedded_texts_total",
    "Texts the embedding model ran on (cache hits excluded), by the kind of call that asked first (document or query)",
    ["kind"],
)
INDEX_VECTORS = Gauge("memloop_index_vectors", "Vectors held by this replica's indexes", ["replica"])
INDEX_WATERMARK = Gauge("memloop_index_watermark", "Highest change sequence applied by this replica", ["replica"])
VECTORS_FILLED = Counter(
    "memloop_index_vectors_filled_total",
    "Active memories the index found with no vector of its embedder and embedded itself: expected after a "
    "change of embedder or precision, otherwise a write that lost its vector",
    ["replica"],
)
INDEX_LOADS = Counter("memloop_index_loads_total", "Index loads at start, by source (disk or database)", ["source"])


class PrometheusMemoryMetrics:
    def __init__(self, replica_id: str) -> None:
        self._replica = replica_id

    def decision_applied(self, outcome: str) -> None:
        DECISIONS.labels(outcome).inc()

    def event_repeated(self) -> None:
        REPEATS.inc()

    def conflict_retried(self) -> None:
        CONFLICT_RETRIES.inc()

    def retrieval_observed(self, seconds: float, cache_hit: bool) -> None:
        RETRIEVAL.labels("hit" if cache_hit else "miss").observe(seconds)

    def texts_embedded(self, kind: str, count: int) -> None:
        EMBEDDED.labels(kind).inc(count)

    def index_state(self, vectors: int, watermark: int) -> None:
        INDEX_VECTORS.labels(self._replica).set(vectors)
        INDEX_WATERMARK.labels(self._replica).set(watermark)

    def index_loaded(self, source: str) -> None:
        INDEX_LOADS.labels(source).inc()

    def vectors_filled(self, count: int) -> None:
        VECTORS_FILLED.labels(self._replica).inc(count)
