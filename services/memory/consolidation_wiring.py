"""The consolidation part of the memory composition root: settings → adapters → job → servicer, scheduler.

Called once from `bootstrap.bootstrap` with the ports the rest of the service uses, so the job's
after-commit effects (index catch-up, cache invalidation, notices) and conflict metrics are the
same objects as ApplyLearning's. Kept in its own module so the memory composition root stays short.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from services.memory.consolidation_settings import ConsolidationSettings
from services.memory.core.service.deps import MemoryPorts


@dataclass
class ConsolidationApp:
    """The servicer to register and the scheduler the process main starts and stops."""

    servicer: ConsolidationServicer
    scheduler: ConsolidationScheduler

    def start_scheduler(self) -> None:
        self.scheduler.start()

    def stop_scheduler(self) -> None:
        self.scheduler.stop()


def build_consolidation(settings: ConsolidationSettings, engine: Engine, ports: MemoryPorts) -> ConsolidationApp:
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
    triggers = Triggers(settings.after_memories, settings.idle_seconds, settings.poll_seconds)
    scheduler = ConsolidationScheduler(SqlConsolidationActivity(sessions), deps, triggers, clock=ports.clock)
    return ConsolidationApp(ConsolidationServicer(deps), scheduler)
