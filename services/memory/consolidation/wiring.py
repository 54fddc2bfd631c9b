"""Consolidation wired on core's ports: the servicer (RunConsolidation and its reads) and the
sleep-time scheduler, sharing one set of dependencies. Called by memory's composition root
(`services/memory/bootstrap.py`), which decides which process starts the scheduler."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from services.memory.consolidation.adapters.fault_pause import FilePauseHook
from services.memory.consolidation.adapters.metrics import PrometheusConsolidationMetrics
from services.memory.consolidation.adapters.repository import (
    SqlConsolidationActivity,
    SqlConsolidationUnitOfWork,
    job_sessions,
)
from services.memory.consolidation.entrypoints.grpc_server import ConsolidationServicer
from services.memory.consolidation.service.job import ConsolidationDeps
from services.memory.consolidation.service.ports import ConsolidationUnitOfWork, PhaseHook, no_pause
from services.memory.consolidation.service.scheduler import ConsolidationScheduler, Triggers
from services.memory.consolidation.settings import ConsolidationSettings
from services.memory.core.service.deps import MemoryPorts


def build_consolidation(
    settings: ConsolidationSettings, engine: Engine, ports: MemoryPorts, *, schedule: bool
) -> tuple[ConsolidationServicer, ConsolidationScheduler | None]:
    """The servicer, and the scheduler only for the process that runs it (`schedule`)."""
    sessions = sessionmaker(engine)

    def unit_of_work(tenant: str) -> ConsolidationUnitOfWork:
        return SqlConsolidationUnitOfWork(sessions, tenant)

    hook: PhaseHook = no_pause if settings.fault_pause_dir is None else FilePauseHook(settings.fault_pause_dir)
    deps = ConsolidationDeps(
        sessions=job_sessions(engine),
        uow=unit_of_work,
        effects=ports.effects,
        metrics=PrometheusConsolidationMetrics(),
        memory_metrics=ports.metrics,
        hook=hook,
        clock=ports.clock,
        wait_seconds=settings.wait_seconds,
        attempts=ports.tuning.apply_attempts,
    )
    if not schedule:
        return ConsolidationServicer(deps), None
    triggers = Triggers(settings.after_memories, settings.idle_seconds, settings.poll_seconds)
    scheduler = ConsolidationScheduler(SqlConsolidationActivity(sessions), deps, triggers, clock=ports.clock)
    return ConsolidationServicer(deps), scheduler
