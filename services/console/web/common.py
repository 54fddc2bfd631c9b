"""What every page handler shares: the console's wiring, the signed-in viewer, CSRF, rendering and
the translation of a service's refusal into a page, a toast or a JSON error.

Handlers are plain `async def handler(request, viewer)` functions wrapped by `@endpoint`; the same
function answers HTML for the browser and JSON under /api, so the two can never drift apart.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import quote

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from services.common.gen.memloop.v1 import candidate_pb2
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lp
from services.common.gen.memloop.v1 import memory_service_pb2 as mem
from services.console.ports import DeadLetters, MetricsReader, ServiceError, Services
from services.console.web.session import (
    CSRF_FIELD,
    CSRF_HEADER,
    SESSION_COOKIE,
    Authenticator,
    CsrfSigner,
    Viewer,
    viewer_from,
)

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_HTTP_STATUS = {
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "FAILED_PRECONDITION": 409,
    "ABORTED": 409,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}

Handler = Callable[[Request, Viewer], Awaitable[Response]]
_actions = logging.getLogger("memloop.console.actions")


@dataclass
class Console:
    """The console's collaborators, built once by `bootstrap.build`."""

    services: Services
    dead_letters: DeadLetters
    metrics: MetricsReader
    authenticator: Authenticator
    signer: CsrfSigner
    secure_cookies: bool
    templates: Environment

    def viewer(self, request: Request) -> Viewer | None:
        return viewer_from(
            self.authenticator, self.signer, request.cookies.get(SESSION_COOKIE), request.headers.get("authorization")
        )


def _enum(enum: Any, prefix: str) -> Callable[[int], str]:
    def name(value: int) -> str:
        try:
            return str(enum.Name(value)).removeprefix(prefix).lower().replace("_", " ")
        except ValueError:
            return "unknown"

    return name


def _time(value: Timestamp) -> str:
    if not value.seconds and not value.nanos:
        return ""
    return value.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def templates() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]), trim_blocks=True)
    env.filters.update(
        memory_type=_enum(candidate_pb2.MemoryType, "MEMORY_TYPE_"),
        origin=_enum(candidate_pb2.Origin, "ORIGIN_"),
        memory_state=_enum(mem.MemoryState, "MEMORY_STATE_"),
        review_state=_enum(mem.ReviewState, "REVIEW_STATE_"),
        step_state=_enum(mem.DeletionStepState, "DELETION_STEP_STATE_"),
        scope=_enum(mem.ForgetScope, "FORGET_SCOPE_"),
        kind=_enum(lp.ProcedureKind, "PROCEDURE_KIND_"),
        status=_enum(lp.ProcedureState, "PROCEDURE_STATE_"),
        struct_json=lambda value: json.dumps(MessageToDict(value), sort_keys=True),
        source=_enum(lp.ProcedureSource, "PROCEDURE_SOURCE_"),
        time=_time,
        urlq=lambda v: quote(str(v), safe=""),
    )
    return env


def console_of(request: Request) -> Console:
    console: Console = request.app.state.console
    return console


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def as_json(message: Message) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=True)


def render(
    request: Request, viewer: Viewer | None, template: str, context: Mapping[str, Any], status: int = 200
) -> HTMLResponse:
    page = console_of(request).templates.get_template(template)
    html = page.render(request=request, viewer=viewer, csrf_field=CSRF_FIELD, **context)
    return HTMLResponse(html, status_code=status)


def toast(request: Request, viewer: Viewer | None, message: str, *, kind: str = "ok", status: int = 200) -> Response:
    """A toast alone, appended to the page's live region (an htmx answer to an action)."""
    response = render(request, viewer, "partials/toast.html", {"message": message, "kind": kind, "oob": False}, status)
    response.headers["HX-Retarget"] = "#toasts"
    response.headers["HX-Reswap"] = "beforeend"
    return response


def refusal(
    request: Request, viewer: Viewer | None, status: int, code: str, message: str, reason: str = ""
) -> Response:
    """One refusal, shaped for whoever asked: JSON for the API, a toast for htmx, a page otherwise."""
    if wants_json(request):
        return JSONResponse({"error": {"code": code, "message": message, "reason": reason}}, status_code=status)
    text = _refusal_text(code, message, reason)
    if is_htmx(request):
        return toast(request, viewer, text, kind="error", status=status)
    return render(request, viewer, "error.html", {"status": status, "code": code, "message": text}, status)


def _refusal_text(code: str, message: str, reason: str) -> str:
    if reason == "NEVER_SUPPRESS":
        return f"Refused by the never-suppress guard: {message}"
    if code == "PERMISSION_DENIED":
        return f"The service refused this for your token: {message}"
    return f"{code.replace('_', ' ').capitalize()}: {message}" if message else code


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def form_of(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


async def _csrf_presented(request: Request) -> str:
    presented = request.headers.get(CSRF_HEADER, "")
    content_type = request.headers.get("content-type", "")
    if not presented and content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        presented = (await form_of(request)).get(CSRF_FIELD, "")
    return presented


def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Authenticate, check CSRF on every state-changing request, map a service refusal once."""

    @functools.wraps(handler)
    async def wrapped(request: Request) -> Response:
        console = console_of(request)
        viewer = console.viewer(request)
        if viewer is None:
            if wants_json(request):
                return refusal(request, None, 401, "UNAUTHENTICATED", "sign in with a bearer token")
            here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            login = f"/login?next={quote(here, safe='/')}"
            if is_htmx(request):  # a fragment request must not swap the login page into a panel
                return Response(status_code=401, headers={"HX-Redirect": login})
            return redirect(login)
        needs_csrf = request.method not in _SAFE_METHODS and viewer.via_cookie
        if needs_csrf and not console.signer.valid(viewer.token, await _csrf_presented(request)):
            return refusal(request, viewer, 403, "CSRF_REJECTED", "missing or wrong CSRF token; reload the page")
        try:
            response = await handler(request, viewer)
        except ServiceError as error:
            status = _HTTP_STATUS.get(error.code, 502)
            response = refusal(request, viewer, status, error.code, error.message, error.reason)
        except FormError as error:
            response = refusal(request, viewer, 400, "INVALID_ARGUMENT", str(error), error.field)
        if request.method not in _SAFE_METHODS:
            _log_action(request, viewer, response.status_code)
        return response

    return wrapped


def _log_action(request: Request, viewer: Viewer, status: int) -> None:
    """Every state-changing request, with the person who made it (the services audit the change itself)."""
    _actions.info(
        "console action %s %s by %s tenant=%s roles=%s -> %d",
        request.method,
        request.url.path,
        viewer.subject,
        viewer.tenant,
        viewer.roles.replace(" ", ""),
        status,
    )


class FormError(ValueError):
    """A form or JSON body the console can reject before calling anything; names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def required(values: Mapping[str, Any], field: str, limit: int = 4000) -> str:
    value = str(values.get(field, "") or "").strip()
    if not value:
        raise FormError(field, "is required")
    if len(value) > limit:
        raise FormError(field, f"is longer than {limit} characters")
    return value
