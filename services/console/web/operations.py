"""Operator pages: dead letters (reason, attempts, replay) and health (outbox age, consumer lag, DLQ
depth from the services' metrics).

Dead letters never reach memory, so no service checks roles on them: the console itself only lets
an admin replay, and only the dead letters of the admin's own tenant are listed or replayed.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from services.console.web.common import FormError, console_of, endpoint, redirect, refusal, render
from services.console.web.session import Viewer


@endpoint
async def dead_letters(request: Request, viewer: Viewer) -> Response:
    try:
        entries = await console_of(request).dead_letters.list(viewer.tenant)
        error = ""
    except (OSError, TimeoutError, RuntimeError) as exc:
        entries, error = [], f"cannot read the dead-letter stream: {type(exc).__name__} {exc}"
    context = {"entries": entries, "error": error, "done": request.query_params.get("done", "")}
    return render(request, viewer, "dead_letters.html", context)


@endpoint
async def replay(request: Request, viewer: Viewer) -> Response:
    if not viewer.can("dead_letters.replay"):
        return refusal(request, viewer, 403, "PERMISSION_DENIED", "replaying dead letters needs the admin role")
    try:
        sequence = int(request.path_params["sequence"])
    except ValueError as exc:
        raise FormError("sequence", "must be a number") from exc
    try:
        await console_of(request).dead_letters.replay(viewer.tenant, sequence)
    except LookupError as exc:
        return refusal(request, viewer, 404, "NOT_FOUND", str(exc))
    return redirect("/dead-letters?done=replayed")


@endpoint
async def health(request: Request, viewer: Viewer) -> Response:
    figures = await console_of(request).metrics.figures()
    return render(request, viewer, "health.html", {"figures": figures})
