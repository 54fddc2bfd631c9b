"""The deletion part of the memory composition root (issue 6): adapters → use case deps, workflow, loop.

Called once from `bootstrap.bootstrap` with the ports the rest of the service uses, so a Forget's
after-commit effects (this replica's index, its cache, the change notice) are the very objects
ApplyLearning uses, and the workflow's replica duty acts on this replica's own synchroniser.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from services.memory.core.adapters.nats_bus import NatsBus
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.deletion.adapters.faults import CrashAfterStep
from services.memory.deletion.adapters.notices import NatsDeletionNotices, requests_subject
from services.memory.deletion.adapters.queue import SqlDeletionQueue
from services.memory.deletion.adapters.serving_content import GrpcServingContent
from services.memory.deletion.adapters.stream_eraser import JetStreamEraser
from services.memory.deletion.adapters.unit_of_work import SqlDeletionUnitOfWork
from services.memory.deletion.entrypoints.loop import DeletionLoop
from services.memory.deletion.service.deletion import DeletionDeps
from services.memory.deletion.service.ports import DeletionUnitOfWork
from services.memory.deletion.service.workflow import AfterStep, DeletionWorkflow, WorkflowDeps, no_fault
from services.memory.settings import MemorySettings


@dataclass
class DeletionApp:
    """What the servicer needs (`deps`) and what the process starts and stops (`loop`)."""

    deps: DeletionDeps
    loop: DeletionLoop
    serving: GrpcServingContent

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()
        self.serving.close()


def build_deletion(
    settings: MemorySettings, engine: Engine, ports: MemoryPorts, sync: IndexSynchroniser, bus: NatsBus
) -> DeletionApp:
    config = settings.deletion
    sessions = sessionmaker(engine)

    def unit_of_work(tenant: str) -> DeletionUnitOfWork:
        return SqlDeletionUnitOfWork(sessions, tenant)

    queue = SqlDeletionQueue(sessions)
    serving = GrpcServingContent(
        config.serving_target, config.service_token, timeout_seconds=config.rpc_timeout_seconds
    )
    notices = NatsDeletionNotices(bus, prefix=settings.subject_prefix, replica_id=settings.replica_id)
    after_step: AfterStep = CrashAfterStep(config.fault_crash_after_step) if config.fault_crash_after_step else no_fault
    workflow = DeletionWorkflow(
        WorkflowDeps(
            uow=unit_of_work,
            queue=queue,
            serving=serving,
            streams=JetStreamEraser(
                settings.nats_url,
                prefix=settings.subject_prefix,
                learning_stream=config.learning_stream,
                timeout_seconds=config.rpc_timeout_seconds,
            ),
            replica=sync,
            notices=notices,
            lease_seconds=config.lease_seconds,
            liveness_seconds=config.liveness_seconds,
            parallelism=config.parallelism,
            after_step=after_step,
            clock=ports.clock,
        )
    )
    loop = DeletionLoop(
        workflow, queue, sync, poll_seconds=config.poll_seconds, heartbeat_seconds=config.heartbeat_seconds
    )
    bus.subscribe(requests_subject(settings.subject_prefix), loop.on_notice)
    wake: Callable[[], None] = loop.wake
    deps = DeletionDeps(
        uow=unit_of_work,
        effects=ports.effects,
        metrics=ports.metrics,
        serving=serving,
        notices=notices,
        wake=wake,
        replica_id=settings.replica_id,
        liveness_seconds=config.liveness_seconds,
        lease_seconds=config.lease_seconds,
        attempts=ports.tuning.apply_attempts,
        clock=ports.clock,
    )
    return DeletionApp(deps, loop, serving)
