"""The one MemoryService servicer: core's RPCs and the deletion capability's, joined.

The proto keeps Forget and GetDeletion on MemoryService (one client surface), while the code keeps
them in the deletion capability; this is the only module that sees both.
"""

from __future__ import annotations

from services.memory.core.entrypoints.grpc_server import CoreMemoryRpcs
from services.memory.core.service.deps import MemoryPorts
from services.memory.deletion.entrypoints.grpc_server import DeletionRpcs
from services.memory.deletion.service.deletion import DeletionDeps


class MemoryServicer(CoreMemoryRpcs, DeletionRpcs):
    def __init__(self, ports: MemoryPorts, deletions: DeletionDeps) -> None:
        CoreMemoryRpcs.__init__(self, ports)
        DeletionRpcs.__init__(self, deletions)
