"""The deletion workflow wired on core's ports: the servicer's dependencies (Forget and its reads)
and the loop that drives every deletion to every location. Called by memory's composition root
(`services/memory/bootstrap.py`), which starts and stops the parts with the replica."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from services.common.settings import CommonSettings
from services.memory.core.adapters.nats_bus import NatsBus
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.deletion.adapters.faults import CrashAfterStep
from services.memory.deletion.adapters.metrics import DeletionBacklog
from services.memory.deletion.adapters.notices import NatsDeletionNotices, requests_subject
from services.memory.deletion.adapters.queue import SqlDeletionQueue
from services.memory.deletion.adapters.serving_content import GrpcServingContent
from services.memory.deletion.adapters.stream_eraser import JetStreamEraser
from services.memory.deletion.adapters.unit_of_work import SqlDeletionUnitOfWork
from services.memory.deletion.entrypoints.loop import DeletionLoop
from services.memory.deletion.service.forget import DeletionDeps
from services.memory.deletion.service.ports import DeletionUnitOfWork
from services.memory.deletion.service.workflow import AfterStep, DeletionWorkflow, WorkflowDeps, no_fault
from services.memory.deletion.settings import DeletionSettings


@dataclass
class DeletionParts:
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
    config: DeletionSettings,
    *,
    common: CommonSettings,
    nats_url: str,
    subject_prefix: str,
    replica_id: str,
    engine: Engine,
    ports: MemoryPorts,
    sync: IndexSynchroniser,
    bus: NatsBus,
) -> DeletionParts:
    """The workflow, its loop (subscribed to deletion requests on `bus`) and the servicer's deps,
    on core's ports and this replica's index (`sync`), so a deletion reaches this copy too."""
    sessions = sessionmaker(engine)

    def unit_of_work(tenant: str) -> DeletionUnitOfWork:
        return SqlDeletionUnitOfWork(sessions, tenant)

    queue = SqlDeletionQueue(sessions)
    serving = GrpcServingContent(
        config.serving_target, config.service_token, timeout_seconds=config.rpc_timeout_seconds, tls=common.tls
    )
    notices = NatsDeletionNotices(bus, prefix=subject_prefix, replica_id=replica_id)
    after_step: AfterStep = CrashAfterStep(config.fault_crash_after_step) if config.fault_crash_after_step else no_fault
    workflow = DeletionWorkflow(
        WorkflowDeps(
            uow=unit_of_work,
            queue=queue,
            serving=serving,
            streams=JetStreamEraser(
                nats_url,
                prefix=subject_prefix,
                learning_stream=config.learning_stream,
                timeout_seconds=config.rpc_timeout_seconds,
                access=common.nats,
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
        workflow,
        queue,
        sync,
        poll_seconds=config.poll_seconds,
        heartbeat_seconds=config.heartbeat_seconds,
        after_pass=DeletionBacklog(sessions).publish,
    )
    bus.subscribe(requests_subject(subject_prefix), loop.on_notice)
    wake: Callable[[], None] = loop.wake
    deps = DeletionDeps(
        uow=unit_of_work,
        effects=ports.effects,
        metrics=ports.metrics,
        serving=serving,
        notices=notices,
        wake=wake,
        replica_id=replica_id,
        liveness_seconds=config.liveness_seconds,
        lease_seconds=config.lease_seconds,
        attempts=ports.tuning.apply_attempts,
        clock=ports.clock,
    )
    return DeletionParts(deps, loop, serving)
