"""LearnedProcedureService protobuf ↔ domain: requests into validated commands, rows into messages.

Enums are mapped here, once. Field rules that belong to the procedure itself (intent key shape,
text sizes, the never-suppress guard) stay in the domain; this module checks only what the wire
adds: ids that must be UUIDs, enum values, the id-or-intent choice, and page and scope sizes.
"""

from __future__ import annotations

import uuid
from typing import Any

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct

from services.common.errors import InvalidArgument, require
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as pb
from services.common.telemetry import current_trace_id
from services.memory.core.entrypoints.operator_text import kept, kept_values
from services.memory.core.entrypoints.pb_mapping import timestamp
from services.memory.core.entrypoints.requests import reason_of, tenant_of
from services.memory.procedures.domain.backfill import RefusedLegacyRule
from services.memory.procedures.domain.procedures import (
    MAX_TEXT_CHARS,
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
    SaveProcedure,
)
from services.memory.procedures.service.ports import ProcedureFilter
from services.memory.procedures.service.procedures import DeprecateProcedure

KIND_TO_PB = {
    ProcedureKind.SUBSTANTIVE: pb.PROCEDURE_KIND_SUBSTANTIVE,
    ProcedureKind.GOVERNANCE: pb.PROCEDURE_KIND_GOVERNANCE,
}
KIND_FROM_PB = {v: k for k, v in KIND_TO_PB.items()}
STATE_TO_PB = {
    ProcedureStatus.DRAFT: pb.PROCEDURE_STATE_DRAFT,
    ProcedureStatus.ACTIVE: pb.PROCEDURE_STATE_ACTIVE,
    ProcedureStatus.SUPERSEDED: pb.PROCEDURE_STATE_SUPERSEDED,
    ProcedureStatus.DEPRECATED: pb.PROCEDURE_STATE_DEPRECATED,
}
STATE_FROM_PB = {v: k for k, v in STATE_TO_PB.items()}
SOURCE_TO_PB = {
    ProcedureSource.OFFICER_TEACHING: pb.PROCEDURE_SOURCE_OFFICER_TEACHING,
    ProcedureSource.SLEEPTIME_CONSOLIDATION: pb.PROCEDURE_SOURCE_SLEEPTIME_CONSOLIDATION,
}
SOURCE_FROM_PB = {v: k for k, v in SOURCE_TO_PB.items()}
MAX_LEGACY_RULES = 1000


def procedure_id_of(value: str, field: str = "procedure_id") -> str:
    """Procedure ids are UUIDs; anything else is refused here rather than by the database."""
    require(value, field, max_length=64)
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidArgument(field, "must be a UUID") from None


def save_command(request: pb.SaveLearnedProcedureRequest, *, actor: str) -> SaveProcedure:
    """The caller (token subject) is recorded as created_by; unspecified source is officer teaching."""
    kind = KIND_FROM_PB.get(request.kind)
    if kind is None:
        raise InvalidArgument("kind", "must be SUBSTANTIVE or GOVERNANCE")
    source = (
        ProcedureSource.OFFICER_TEACHING
        if request.source == pb.PROCEDURE_SOURCE_UNSPECIFIED
        else SOURCE_FROM_PB.get(request.source)
    )
    if source is None:
        raise InvalidArgument("source", "must be a known procedure source")
    if len(request.request_id) > 256:
        raise InvalidArgument("request_id", "must be at most 256 characters")
    details: dict[str, Any] = json_format.MessageToDict(request.details) if request.HasField("details") else {}
    return SaveProcedure(
        tenant=tenant_of(request.tenant),
        intent_key=request.intent_key,
        title=kept(request.title),
        kind=kind,
        scope=request.scope,
        trigger=kept(request.trigger),
        action=kept(request.action),
        rationale=kept(request.rationale),
        details=kept_values(details),
        created_by=actor,
        source=source,
        status=ProcedureStatus.DRAFT if request.draft else ProcedureStatus.ACTIVE,
    )


def list_filter(request: pb.ListLearnedProceduresRequest) -> ProcedureFilter:
    """Unspecified kind means any kind; unspecified state means active (the ADR's default)."""
    kind = None
    if request.kind != pb.PROCEDURE_KIND_UNSPECIFIED:
        kind = KIND_FROM_PB.get(request.kind)
        if kind is None:
            raise InvalidArgument("kind", "must be a known procedure kind")
    status: ProcedureStatus | None = ProcedureStatus.ACTIVE
    if request.state != pb.PROCEDURE_STATE_UNSPECIFIED:
        status = STATE_FROM_PB.get(request.state)
        if status is None:
            raise InvalidArgument("state", "must be a known procedure state")
    return ProcedureFilter(kind=kind, status=status)


def deprecate_command(request: pb.DeprecateLearnedProcedureRequest, *, actor: str) -> DeprecateProcedure:
    if request.WhichOneof("target") is None:
        raise InvalidArgument("procedure_id", "give exactly one of procedure_id or intent_key")
    return DeprecateProcedure(
        tenant=tenant_of(request.tenant),
        procedure_id=procedure_id_of(request.procedure_id) if request.procedure_id else "",
        intent_key=require(request.intent_key, "intent_key", max_length=120) if request.intent_key else "",
        reason=reason_of(request.reason),
        actor=actor,
        trace_id=current_trace_id(),
    )


def legacy_rules(request: pb.BackfillLearnedProceduresRequest) -> list[dict[str, object]]:
    """The legacy block as the domain planner reads it: one mapping per rule, in appended order."""
    if not request.rules:
        raise InvalidArgument("rules", "must hold at least one legacy rule")
    if len(request.rules) > MAX_LEGACY_RULES:
        raise InvalidArgument("rules", f"must hold at most {MAX_LEGACY_RULES} legacy rules")
    return [
        {
            "saved_at": rule.saved_at,
            "created_by": rule.created_by,
            "scope": rule.scope,
            "trigger": kept(rule.trigger),
            "action": kept(rule.action),
            "rationale": kept(rule.rationale),
        }
        for rule in request.rules
    ]


def case_scope_of(value: str) -> str:
    if len(value) > MAX_TEXT_CHARS:
        raise InvalidArgument("scope", f"must be at most {MAX_TEXT_CHARS} characters")
    return value


def procedure_to_pb(procedure: LearnedProcedure) -> pb.LearnedProcedure:
    details = json_format.ParseDict(procedure.details, Struct())
    return pb.LearnedProcedure(
        procedure_id=procedure.id,
        tenant=procedure.tenant,
        intent_key=procedure.intent_key,
        title=procedure.title,
        kind=KIND_TO_PB[procedure.kind],
        scope=procedure.scope,
        trigger=procedure.trigger,
        action=procedure.action,
        rationale=procedure.rationale,
        details=details,
        state=STATE_TO_PB[procedure.status],
        version=procedure.version,
        supersedes_id=procedure.supersedes_id or "",
        superseded_by_id=procedure.superseded_by_id or "",
        source=SOURCE_TO_PB[procedure.source],
        created_by=procedure.created_by or "",
        create_time=timestamp(procedure.created_at),
        update_time=timestamp(procedure.updated_at),
    )


def optional_procedure_to_pb(procedure: LearnedProcedure | None) -> pb.LearnedProcedure | None:
    """None stays None, so an unset message field (no superseded row) stays unset on the wire."""
    return None if procedure is None else procedure_to_pb(procedure)


def refused_to_pb(refused: RefusedLegacyRule) -> pb.RefusedLegacyRule:
    return pb.RefusedLegacyRule(index=refused.index, reason=refused.reason, detail=refused.detail)
