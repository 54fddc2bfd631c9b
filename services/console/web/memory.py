"""The Memory page: a tenant's users, one user's active memories (listed or searched), and one
memory's story — its lineage with why each version was superseded, its audit timeline, and the
trace of its source event exactly as `memloop trace` prints it (the CLI's own function)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from urllib.parse import quote

from google.protobuf.json_format import MessageToDict
from starlette.requests import Request
from starlette.responses import Response

from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.console.ports import ServiceError
from services.console.web.common import console_of, endpoint, redirect, render
from services.console.web.session import Viewer


@dataclass(frozen=True)
class LineageStep:
    """One version of a memory's chain and, when it was replaced, why."""

    memory: mem.Memory
    why: str


@endpoint
async def users(request: Request, viewer: Viewer) -> Response:
    if request.query_params.get("user", "").strip():
        return redirect(f"/memory/{quote(request.query_params['user'].strip(), safe='')}")
    services = console_of(request).services.for_token(viewer.token)
    active = await services.memories(viewer.tenant, "", [mem.MEMORY_STATE_ACTIVE])
    counts = sorted(Counter(m.user for m in active).items())
    return render(request, viewer, "memory_users.html", {"counts": counts})


@endpoint
async def user_memories(request: Request, viewer: Viewer) -> Response:
    user = request.path_params["user"]
    query = request.query_params.get("q", "").strip()
    services = console_of(request).services.for_token(viewer.token)
    if query:
        hits = await services.search(viewer.tenant, user, query)
        rows = [(hit.memory, f"{hit.score:.2f}") for hit in hits]
    else:
        rows = [(m, "") for m in await services.memories(viewer.tenant, user, [mem.MEMORY_STATE_ACTIVE])]
    return render(request, viewer, "memory_user.html", {"user": user, "query": query, "rows": rows})


def _why(replaced: mem.Memory, successor: mem.Memory | None, audits: list[mem.AuditEvent]) -> str:
    """Why `replaced` stopped being active, from the audit rows of it and of its successor."""
    parts = []
    for audit in audits:
        if audit.memory_id == replaced.memory_id and audit.action == "memory.superseded":
            detail = MessageToDict(audit.detail)
            parts.append(f"superseded by {detail.get('superseded_by', '?')} ({audit.actor}, event {audit.event_id})")
            if detail.get("reason"):
                parts.append(f"reason: {detail['reason']}")
            if detail.get("retire_reason"):
                parts.append(f"consolidation: {detail['retire_reason']}")
    for audit in audits:
        if successor is not None and audit.memory_id == successor.memory_id and audit.action == "memory.stored":
            detail = MessageToDict(audit.detail)
            parts.append(f"the successor was stored by {audit.actor} ({_flat(detail)})")
        if successor is not None and audit.memory_id == successor.memory_id and audit.action == "review.approved":
            parts.append(f"successor approved by {audit.actor}: {_flat(MessageToDict(audit.detail))}")
    if replaced.state == mem.MEMORY_STATE_DEPRECATED:
        parts += [
            f"deprecated by {a.actor}: {_flat(MessageToDict(a.detail))}"
            for a in audits
            if a.memory_id == replaced.memory_id and a.action == "memory.deprecated"
        ]
    return "; ".join(parts)


def _flat(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_flat(v)}" for k, v in value.items())
    return str(value)


@endpoint
async def memory_detail(request: Request, viewer: Viewer) -> Response:
    memory_id = request.path_params["memory_id"]
    services = console_of(request).services.for_token(viewer.token)
    memory = await services.memory(viewer.tenant, memory_id)
    chain = await services.lineage(viewer.tenant, memory_id)
    chain_audits = await asyncio.gather(*(services.audit(viewer.tenant, memory_id=m.memory_id) for m in chain))
    audits = [a for group in chain_audits for a in group]
    steps = [
        LineageStep(m, _why(m, chain[i + 1] if i + 1 < len(chain) else None, audits) if m.superseded_by else "")
        for i, m in enumerate(chain)
    ]
    own_audit = sorted(
        (a for a in audits if a.memory_id == memory_id), key=lambda a: (a.create_time.seconds, a.create_time.nanos)
    )
    source = memory.source_event_ids[0] if memory.source_event_ids else ""
    trace: list[str] = []
    trace_error = ""
    if source:
        try:
            trace = await services.trace(viewer.tenant, source)
        except ServiceError as error:
            trace_error = f"{error.code}: {error.message}"
    context = {
        "memory": memory,
        "steps": steps,
        "audit": own_audit,
        "source": source,
        "trace": trace,
        "trace_error": trace_error,
    }
    return render(request, viewer, "memory_detail.html", context)
