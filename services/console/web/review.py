"""The review queue: what the loop held for a person, side by side with what it may contradict.

Counts per user come from every pending item of the tenant; the filters narrow the list shown.
The conflicting active memories are asked of memory (`FindConflicts`, the same call the worker
makes before policy decides), so the reviewer sees what approving would contradict or replace.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from starlette.requests import Request
from starlette.responses import Response

from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.console.web.common import FormError, console_of, endpoint, form_of, is_htmx, redirect, render, required
from services.console.web.session import Viewer

_SHOWN = 50
_TYPES = {
    candidate_pb2.MemoryType.Name(v).removeprefix("MEMORY_TYPE_").lower(): v
    for v in candidate_pb2.MemoryType.values()
    if v
}


@endpoint
async def review_queue(request: Request, viewer: Viewer) -> Response:
    services = console_of(request).services.for_token(viewer.token)
    pending = await services.review_items(viewer.tenant, mem.REVIEW_STATE_PENDING)
    counts = sorted(Counter(item.user for item in pending).items())
    user = request.query_params.get("user", "")
    type_name = request.query_params.get("type", "")
    wanted_type = _TYPES.get(type_name)
    shown = [
        item
        for item in pending
        if (not user or item.user == user) and (wanted_type is None or item.decision.candidate.type == wanted_type)
    ]
    conflicts = await asyncio.gather(
        *(services.find_conflicts(viewer.tenant, i.user, i.decision.candidate) for i in shown[:_SHOWN])
    )
    context = {
        "items": list(zip(shown[:_SHOWN], conflicts, strict=True)),
        "more": max(0, len(shown) - _SHOWN),
        "counts": counts,
        "total": len(pending),
        "user": user,
        "type": type_name if wanted_type is not None else "",
        "types": sorted(_TYPES),
        "done": request.query_params.get("done", ""),
    }
    return render(request, viewer, "review.html", context)


@endpoint
async def resolve(request: Request, viewer: Viewer) -> Response:
    form = await form_of(request)
    resolution = form.get("resolution", "")
    if resolution not in ("approve", "deny"):
        raise FormError("resolution", "must be approve or deny")
    reason = required(form, "reason", 1000)
    services = console_of(request).services.for_token(viewer.token)
    item_id = request.path_params["review_item_id"]
    resolved = await services.resolve_review(viewer.tenant, item_id, resolution == "approve", reason)
    if not is_htmx(request):
        return redirect(f"/review?done={'approved' if resolution == 'approve' else 'denied'}")
    message = f"{'Approved' if resolution == 'approve' else 'Denied'}: {resolved.decision.candidate.text[:80]}"
    return render(request, viewer, "partials/resolved.html", {"item": resolved, "message": message})
