"""Forget a memory, a user or an event, and the receipt that follows each location until done.

`Forget` answers once the targets are unretrievable; the rest (vectors on every replica, content
blobs in serving, derived records) completes resumably. The receipt page re-reads `GetDeletion`
every second (htmx polling of the receipt fragment; a meta refresh without JavaScript) and stops
once every location is done.
"""

from __future__ import annotations

import uuid

from starlette.requests import Request
from starlette.responses import Response

from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.console.web.common import FormError, console_of, endpoint, form_of, is_htmx, redirect, render, required
from services.console.web.session import Viewer

_SCOPES = ("memory", "user", "event")  # the request's oneof target says which


@endpoint
async def forget_page(request: Request, viewer: Viewer) -> Response:
    context = {key: request.query_params.get(key, "") for key in ("scope", "memory_id", "user", "event_id")}
    return render(request, viewer, "forget.html", {"prefill": context})


def forget_request(tenant: str, form: dict[str, str]) -> mem.ForgetRequest:
    scope_name = form.get("scope", "")
    if scope_name not in _SCOPES:
        raise FormError("scope", "must be memory, user or event")
    request = mem.ForgetRequest(
        tenant=tenant,
        reason=form.get("reason", "").strip()[:1000],
        request_id=form.get("idempotency_key", "") or str(uuid.uuid4()),
    )
    if scope_name == "memory":
        request.memory_id = required(form, "memory_id", 100)
    elif scope_name == "user":
        request.user = required(form, "user", 200)
    else:
        ident = required(form, "event_id", 200)
        is_event = len(ident) == 36 and ident.count("-") == 4
        if is_event:  # one field of the oneof only: assigning the other, even "", would switch the target
            request.event_id = ident
        else:
            request.source_request_id = ident
    return request


@endpoint
async def forget(request: Request, viewer: Viewer) -> Response:
    form = await form_of(request)
    services = console_of(request).services.for_token(viewer.token)
    receipt = await services.forget(forget_request(viewer.tenant, form))
    return redirect(f"/forget/{receipt.deletion_id}")


@endpoint
async def receipt(request: Request, viewer: Viewer) -> Response:
    services = console_of(request).services.for_token(viewer.token)
    found = await services.deletion(viewer.tenant, request.path_params["deletion_id"])
    template = "partials/receipt.html" if is_htmx(request) else "receipt.html"
    return render(request, viewer, template, {"deletion": found})
