"""Helpers for the learned-procedures integration tests: an authed LearnedProcedureService stub, error
and audit readers, the legacy fixture as a request, and direct database access as the app role.

Not fixtures, and no tests here; `test_learned_procedures.py` declares its own small fixtures.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from sqlalchemy import Connection, text

from services.common.auth import bearer_metadata, issue_token
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lpb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as lpb_grpc
from services.common.gen.memloop.v1 import memory_service_pb2 as mpb
from services.common.grpc_errors import error_details
from services.memory.procedures.domain.procedures import (
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
)
from tests.fixtures import fixture_path
from tests.integration.test_memory_support import SECRET, MemoryNode, token

FIXTURE = fixture_path("legacy_learned_procedures.json")
INTENT = "psp_merchants.newly_incorporated"
AUDIT_KEYS = {"procedure_id", "intent_key", "version", "status", "kind", "source", "supersedes_id", "superseded_by_id"}
ACTIVE, DRAFT = lpb.PROCEDURE_STATE_ACTIVE, lpb.PROCEDURE_STATE_DRAFT
SUPERSEDED, DEPRECATED = lpb.PROCEDURE_STATE_SUPERSEDED, lpb.PROCEDURE_STATE_DEPRECATED


class Procedures:
    """A LearnedProcedureService stub that sends one bearer token (and a deadline) with every call."""

    def __init__(self, node: MemoryNode, tenant: str, *roles: str, subject: str = "officer.kim") -> None:
        self.tenant = tenant
        self._channel = grpc.insecure_channel(f"127.0.0.1:{node.port}")
        self._stub = lpb_grpc.LearnedProcedureServiceStub(self._channel)
        self._metadata = bearer_metadata(issue_token(SECRET, subject=subject, tenant=tenant, roles=roles))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        return functools.partial(getattr(self._stub, name), metadata=self._metadata, timeout=60)

    def save(self, action: str, *, intent: str = INTENT, **fields: Any) -> lpb.SaveLearnedProcedureResponse:
        request = lpb.SaveLearnedProcedureRequest(
            tenant=fields.pop("tenant", self.tenant),
            intent_key=intent,
            title=fields.pop("title", "Newly incorporated PSP merchants"),
            kind=fields.pop("kind", lpb.PROCEDURE_KIND_SUBSTANTIVE),
            scope=fields.pop("scope", "PSP merchants"),
            trigger=fields.pop("trigger", "incorporated less than 3 months ago"),
            action=action,
            rationale=fields.pop("rationale", "thin trading history"),
            **fields,
        )
        return self.SaveLearnedProcedure(request)  # type: ignore[no-any-return]

    def listed(self, state: int = ACTIVE, **filters: Any) -> list[lpb.LearnedProcedure]:
        request = lpb.ListLearnedProceduresRequest(tenant=self.tenant, state=state, page_size=500, **filters)  # type: ignore[arg-type]
        return list(self.ListLearnedProcedures(request).learned_procedures)

    def close(self) -> None:
        self._channel.close()


def failure(call: Callable[[], object]) -> tuple[grpc.StatusCode, str, list[str], str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    reason, fields = error_details(caught.value)
    return caught.value.code(), reason, fields, caught.value.details() or ""


def audit_trail(node: MemoryNode, tenant: str, *actions: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(action, actor, procedure id, detail) of the tenant's learned-procedure audit events, in order."""
    stub = node.stub(token(tenant, ("admin",), subject="auditor"), tenant=tenant)
    events = stub.ListAuditEvents(mpb.ListAuditEventsRequest(tenant=tenant, page_size=1000)).audit_events
    rows = [(e.action, e.actor, e.memory_id, json_format.MessageToDict(e.detail), e.trace_id) for e in events]
    for action, _, procedure_id, detail, trace_id in rows:
        if action.startswith("learned_procedure."):
            assert len(trace_id) == 32 and trace_id != "0" * 32  # every transition names its trace
            assert detail["procedure_id"] == procedure_id
            assert set(detail) - {"reason", "reason_note", "legacy_index", "review_item_id"} <= AUDIT_KEYS  # ids only
    return [r[:4] for r in rows if r[0].startswith("learned_procedure.") and (not actions or r[0] in actions)]


def legacy_request(tenant: str) -> lpb.BackfillLearnedProceduresRequest:
    rules = json.loads(FIXTURE.read_text())["block"]["rules"]
    return lpb.BackfillLearnedProceduresRequest(tenant=tenant, rules=[lpb.LegacyRule(**rule) for rule in rules])


def active_row(tenant: str, intent_key: str) -> LearnedProcedure:
    now = datetime.now(UTC)
    return LearnedProcedure(
        id=str(uuid.uuid4()),
        tenant=tenant,
        intent_key=intent_key,
        title="t",
        kind=ProcedureKind.SUBSTANTIVE,
        scope="",
        trigger="",
        action="request statements",
        rationale="",
        details={},
        status=ProcedureStatus.ACTIVE,
        version=2,
        supersedes_id=None,
        superseded_by_id=None,
        source=ProcedureSource.OFFICER_TEACHING,
        created_by=None,
        created_at=now,
        updated_at=now,
    )


def as_tenant(connection: Connection, tenant: str) -> None:
    connection.execute(text("SELECT set_config('memloop.tenant', :tenant, true)"), {"tenant": tenant})
