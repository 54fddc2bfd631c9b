"""The one MemoryService servicer: core's RPCs, the deletion capability's, and GetContext, joined.

The proto keeps Forget and GetDeletion on MemoryService (one client surface), while the code keeps
them in the deletion capability; GetContext joins core's search with the procedures capability.
Only the root entrypoints see several capabilities.
"""

from __future__ import annotations

from concurrent.futures import Executor

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
