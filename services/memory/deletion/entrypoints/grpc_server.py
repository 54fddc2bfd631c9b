"""MemoryService's deletion RPCs (Forget, GetDeletion): authorize, build the command, call the use case.

Forget needs a writer or admin of the tenant (the roles table, `services.common.access`); the
token's subject is recorded as who asked. These methods belong to the same proto service as core's, so they are a
mixin joined with core's in `services.memory.entrypoints.grpc_server`.
"""

from __future__ import annotations

import grpc

from services.common.auth import authorize_tenant
from services.common.errors import require
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_errors import grpc_method
from services.memory.core.entrypoints import requests
from services.memory.core.entrypoints.grpc_server import DOMAIN
from services.memory.deletion.entrypoints import pb_mapping as deletion_pb
from services.memory.deletion.service import deletion


class DeletionRpcs(pb_grpc.MemoryServiceServicer):
    def __init__(self, deletions: deletion.DeletionDeps) -> None:
        self._deletions = deletions

    @grpc_method(DOMAIN)
    def Forget(self, request: pb.ForgetRequest, context: grpc.ServicerContext) -> pb.ForgetResponse:
        principal = authorize_tenant(request.tenant)
        receipt = deletion.forget(deletion_pb.forget(request, requested_by=principal.subject), self._deletions)
        return pb.ForgetResponse(deletion_id=receipt.deletion_id, memories_affected=receipt.memories_affected)

    @grpc_method(DOMAIN)
    def GetDeletion(self, request: pb.GetDeletionRequest, context: grpc.ServicerContext) -> pb.GetDeletionResponse:
        authorize_tenant(request.tenant)
        tenant, deletion_id = requests.tenant_of(request.tenant), require(request.deletion_id, "deletion_id")
        return deletion_pb.deletion_to_pb(deletion.get_deletion(tenant, deletion_id, self._deletions))
