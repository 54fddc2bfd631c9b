"""The Learned Procedures panel (ADR-0102 §7) and the ADR's HTTP API (§6), from the same handlers.

Under /memory/learned-procedures a handler answers HTML (a whole page, or the fragment htmx asked
for); under /api/memory/learned-procedures the very same handler answers JSON. Edit is a save with
the rule's intent key, so it supersedes; a never-suppress refusal comes back from the service as
INVALID_ARGUMENT with reason NEVER_SUPPRESS and is shown as that refusal, with the rule it broke.
The backfill's preview is the service's own `validate_only` run: the same transaction, rolled back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, cast

from google.protobuf.struct_pb2 import Struct
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.console.web.common import (
    FormError,
    as_json,
    console_of,
    endpoint,
    form_of,
    is_htmx,
    redirect,
    render,
    required,
    wants_json,
)
from services.console.web.session import Viewer

KINDS = {"substantive": lp.PROCEDURE_KIND_SUBSTANTIVE, "governance": lp.PROCEDURE_KIND_GOVERNANCE}
STATUSES = {
    "active": lp.PROCEDURE_STATE_ACTIVE,
    "draft": lp.PROCEDURE_STATE_DRAFT,
    "superseded": lp.PROCEDURE_STATE_SUPERSEDED,
    "deprecated": lp.PROCEDURE_STATE_DEPRECATED,
}
_CHANGED = {"HX-Trigger": "procedures-changed"}


def _choice(values: Mapping[str, Any], field: str, options: Mapping[str, int], default: str = "") -> int:
    raw = str(values.get(field, "") or default).strip().lower()
    if not raw:
        return 0
    if raw not in options:
        raise FormError(field, f"must be one of {', '.join(options)}")
    return options[raw]


async def _body(request: Request) -> dict[str, Any]:
    if wants_json(request):
        try:
            body = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError as exc:
            raise FormError("body", f"is not JSON: {exc.msg}") from exc
        if not isinstance(body, dict):
            raise FormError("body", "must be a JSON object")
        return body
    return dict(await form_of(request))


@endpoint
async def list_procedures(request: Request, viewer: Viewer) -> Response:
    kind = _choice(request.query_params, "kind", KINDS)
    status = _choice(request.query_params, "status", STATUSES)
    found = await console_of(request).services.for_token(viewer.token).procedures(viewer.tenant, kind, status)
    if wants_json(request):
        return JSONResponse({"learned_procedures": [as_json(p) for p in found]})
    context = {
        "procedures": found,
        "kind": request.query_params.get("kind", ""),
        "status": request.query_params.get("status", "") or "active",
        "kinds": list(KINDS),
        "statuses": list(STATUSES),
    }
    template = "partials/procedures_panel.html" if is_htmx(request) else "procedures.html"
    return render(request, viewer, template, context)


@endpoint
async def procedure_detail(request: Request, viewer: Viewer) -> Response:
    services = console_of(request).services.for_token(viewer.token)
    found = await services.procedure(viewer.tenant, request.path_params["procedure_id"])
    if wants_json(request):
        return JSONResponse(as_json(found))
    context = {"procedure": found.learned_procedure, "lineage": list(found.lineage), "kinds": list(KINDS)}
    template = "partials/procedure_sheet.html" if is_htmx(request) else "procedure.html"
    return render(request, viewer, template, context)


@endpoint
async def save_procedure(request: Request, viewer: Viewer) -> Response:
    body = await _body(request)
    details = Struct()
    if isinstance(body.get("details"), dict):
        details.update(body["details"])
    save = lp.SaveLearnedProcedureRequest(
        tenant=viewer.tenant,
        intent_key=required(body, "intent_key", 200),
        title=required(body, "title", 300),
        kind=cast(Any, _choice(body, "kind", KINDS, "substantive")),
        scope=required(body, "scope"),
        trigger=required(body, "trigger"),
        action=required(body, "action"),
        rationale=str(body.get("rationale", "") or "").strip(),
        details=details,
        draft=body.get("draft") in (True, "true", "on", "1"),
        request_id=str(body.get("request_id") or uuid.uuid4()),
    )
    saved = await console_of(request).services.for_token(viewer.token).save_procedure(save)
    if wants_json(request):
        return JSONResponse(as_json(saved), status_code=201)
    if not is_htmx(request):
        return redirect(f"/memory/learned-procedures/{saved.learned_procedure.procedure_id}")
    new = saved.learned_procedure
    message = f"Saved “{new.title}” as version {new.version} of {new.intent_key}"
    if saved.HasField("superseded"):
        message += f"; version {saved.superseded.version} is now superseded"
    return _toast_and_refresh(request, viewer, message)


@endpoint
async def deprecate_procedure(request: Request, viewer: Viewer) -> Response:
    body = await _body(request)
    reason = required(body, "reason", 1000)
    services = console_of(request).services.for_token(viewer.token)
    deprecated = await services.deprecate_procedure(viewer.tenant, request.path_params["procedure_id"], reason)
    if wants_json(request):
        return JSONResponse({"learned_procedure": as_json(deprecated)})
    if not is_htmx(request):
        return redirect(f"/memory/learned-procedures/{deprecated.procedure_id}")
    return _toast_and_refresh(request, viewer, f"Deprecated “{deprecated.title}”: {reason}")


def _toast_and_refresh(request: Request, viewer: Viewer, message: str) -> Response:
    response = render(request, viewer, "partials/toast.html", {"message": message, "kind": "ok", "oob": False})
    response.headers.update({**_CHANGED, "HX-Retarget": "#toasts", "HX-Reswap": "beforeend"})
    return response


def legacy_rules(raw: object) -> list[lp.LegacyRule]:
    """The legacy block as pasted: a list of rules, {"rules": [...]} or {"block": {"rules": [...]}}."""
    if isinstance(raw, dict):
        raw = raw.get("block", raw)
        raw = raw.get("rules") if isinstance(raw, dict) else raw
    if not isinstance(raw, list) or not raw:
        raise FormError("rules", "must be a non-empty list of legacy rules")
    rules = []
    fields = ("saved_at", "created_by", "scope", "trigger", "action", "rationale")
    for index, rule in enumerate(raw):
        if not isinstance(rule, dict):
            raise FormError(f"rules[{index}]", "must be an object")
        rules.append(lp.LegacyRule(**{f: str(rule.get(f, "") or "") for f in fields}))
    return rules


@endpoint
async def backfill_page(request: Request, viewer: Viewer) -> Response:
    return render(request, viewer, "backfill.html", {"rules_text": "", "result": None, "preview": True})


@endpoint
async def backfill(request: Request, viewer: Viewer) -> Response:
    body = await _body(request)
    if wants_json(request):
        rules_text = ""
        rules = legacy_rules(body.get("rules", body))
        preview = request.query_params.get("preview") in ("1", "true") or bool(body.get("validate_only"))
    else:
        rules_text = body.get("rules", "")
        try:
            parsed = json.loads(rules_text or "null")
        except json.JSONDecodeError as exc:
            raise FormError("rules", f"is not JSON: {exc.msg} at line {exc.lineno}") from exc
        rules = legacy_rules(parsed)
        preview = body.get("mode") != "apply"
    services = console_of(request).services.for_token(viewer.token)
    result = await services.backfill(viewer.tenant, rules, validate_only=preview)
    if wants_json(request):
        return JSONResponse({"validate_only": preview, **as_json(result)})
    context = {"rules_text": rules_text, "result": result, "preview": preview, "rules": rules}
    template = "partials/backfill_result.html" if is_htmx(request) else "backfill.html"
    return render(request, viewer, template, context)
