"""The one MemoryService servicer: core's RPCs, the deletion capability's, and GetContext, joined.

The proto keeps Forget and GetDeletion on MemoryService (one client surface), while the code keeps
them in the deletion capability; GetContext joins core's search with the procedures capability.
Only the root entrypoints see several capabilities.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor

import grpc

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.memory.core.entrypoints.grpc_server import CoreMemoryRpcs
from services.memory.core.service.deps import MemoryPorts
from services.memory.deletion.entrypoints.forget_rpc import DeletionRpcs
from services.memory.deletion.service.forget import DeletionDeps
from services.memory.entrypoints.context_grpc import ContextRpcs


class MemoryServicer(CoreMemoryRpcs, DeletionRpcs, ContextRpcs):
    def __init__(
        self,
        ports: MemoryPorts,
        deletions: DeletionDeps,
        ingest: Executor | None = None,
        reads: MemoryPorts | None = None,
    ) -> None:
        CoreMemoryRpcs.__init__(self, ports, ingest, reads)
        DeletionRpcs.__init__(self, deletions)
        ContextRpcs.__init__(self, ports)


# What a split replica's ingestion process serves: the worker's calls (issue 15).
INGESTION_RPCS = frozenset(
    {
        "FindConflicts",
        "BatchFindConflicts",
        "GetProcessedEvent",
        "BatchGetProcessedEvents",
        "ApplyLearning",
        "BatchApplyLearning",
    }
)


class IngestionServicer(MemoryServicer):
    """The MemoryService of a split replica's ingestion process (MEMLOOP_MEMORY_ROLE=ingest): the
    worker's RPCs (`INGESTION_RPCS`); every other method answers UNIMPLEMENTED, so a client pointed
    at this address learns it at once instead of being served at idle priority.

    The whole process runs at idle priority, so the work runs inline on the gRPC threads."""

    def __init__(self, ports: MemoryPorts, deletions: DeletionDeps) -> None:
        super().__init__(ports, deletions)


def _served_by_retrieval(name: str) -> Callable[..., None]:
    def unimplemented(self: IngestionServicer, request: object, context: grpc.ServicerContext) -> None:
        context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            f"{name} is served by memory's retrieval process; this is its ingestion process",
        )

    return unimplemented


for _method in pb.DESCRIPTOR.services_by_name["MemoryService"].methods_by_name:
    if _method not in INGESTION_RPCS:
        setattr(IngestionServicer, _method, _served_by_retrieval(_method))
