"""memloop-client: the agent's side of memloop, in a few lines.

    from memloop_client import Client, Email
    with Client(serving="localhost:50051", memory="localhost:50052", tenant="acme", token=get_token) as memloop:
        ctx = memloop.context("alice", "when can I meet Alice?")
        reply = my_agent(ctx)
        memloop.record("alice", thread="t1", route="calendar", reply=reply, email=mail, procedure_versions=ctx)

`CONTRACT_VERSION` names the protos this client was generated from; it is sent with every call.
"""

from __future__ import annotations

from memloop_client._gen.contract import CONTRACT_VERSION
from memloop_client._transport import trace_context
from memloop_client.aio import AsyncClient
from memloop_client.client import Client
from memloop_client.errors import (
    Conflict,
    FieldViolation,
    InvalidArgument,
    MemloopError,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from memloop_client.results import (
    CONTEXT_VERSION_KEY,
    Context,
    Deletion,
    DeletionStep,
    Email,
    Forgotten,
    Memory,
    Procedure,
    Provenance,
    RecordResult,
    ReviewItem,
    ToolOutcome,
)
from memloop_client.retry import RetryPolicy
from memloop_client.tls import tls_credentials, tls_credentials_from_env

__all__ = [
    "CONTEXT_VERSION_KEY",
    "CONTRACT_VERSION",
    "AsyncClient",
    "Client",
    "Conflict",
    "Context",
    "Deletion",
    "DeletionStep",
    "Email",
    "FieldViolation",
    "Forgotten",
    "InvalidArgument",
    "MemloopError",
    "Memory",
    "NotFound",
    "PermissionDenied",
    "Procedure",
    "Provenance",
    "RecordResult",
    "RetryPolicy",
    "ReviewItem",
    "ToolOutcome",
    "Unauthenticated",
    "Unavailable",
    "tls_credentials",
    "tls_credentials_from_env",
    "trace_context",
]
