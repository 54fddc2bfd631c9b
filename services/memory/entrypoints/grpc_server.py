"""The one MemoryService servicer: core's RPCs, the deletion capability's, and GetContext, joined.

The proto keeps Forget and GetDeletion on MemoryService (one client surface), while the code keeps
them in the deletion capability; GetContext joins core's search with the procedures capability.
Only the root entrypoints see several capabilities.
"""

from __future__ import annotations

from concurrent.futures import Executor

import grpc

from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
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


class IngestionServicer(pb_grpc.MemoryServiceServicer):
    """The MemoryService of a split replica's ingestion process (MEMLOOP_MEMORY_ROLE=ingest): the
    worker's RPCs only; every other method answers UNIMPLEMENTED, so a client pointed at the wrong
    address learns it at once instead of reading from a process that does not keep reads fresh.

    The whole process runs at idle priority, so the work runs inline on the gRPC threads."""

    def __init__(self, ports: MemoryPorts) -> None:
        self._core = CoreMemoryRpcs(ports)

    def FindConflicts(self, request: pb.FindConflictsRequest, context: grpc.ServicerContext) -> pb.FindConflictsResponse:
        return self._core.FindConflicts(request, context)

    def GetProcessedEvent(
        self, request: pb.GetProcessedEventRequest, context: grpc.ServicerContext
    ) -> pb.GetProcessedEventResponse:
        return self._core.GetProcessedEvent(request, context)

    def BatchGetProcessedEvents(
        self, request: pb.BatchGetProcessedEventsRequest, context: grpc.ServicerContext
    ) -> pb.BatchGetProcessedEventsResponse:
        return self._core.BatchGetProcessedEvents(request, context)

    def ApplyLearning(
        self, request: pb.ApplyLearningRequest, context: grpc.ServicerContext
    ) -> pb.ApplyLearningResponse:
        return self._core.ApplyLearning(request, context)

    def BatchApplyLearning(
        self, request: pb.BatchApplyLearningRequest, context: grpc.ServicerContext
    ) -> pb.BatchApplyLearningResponse:
        return self._core.BatchApplyLearning(request, context)
