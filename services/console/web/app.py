"""The console's routes and the headers every response carries.

Content-Security-Policy allows scripts and styles from this origin only: no inline script, no
inline style, no eval (htmx is vendored under /static and told not to inject its own style).
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.console.web import auth, forget, memory, operations, procedures, review
from services.console.web.common import Console

STATIC = Path(__file__).resolve().parent.parent / "static"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """Adds the CSP and friends to every response (pure ASGI: no body buffering)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _home(request: Request) -> Response:
    return RedirectResponse("/review", status_code=303)


async def _healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def _procedure_routes(prefix: str) -> list[Route]:
    """The ADR §6 surface; mounted twice (HTML and /api JSON) on the same handlers."""
    return [
        Route(prefix, procedures.list_procedures, methods=["GET"]),
        Route(prefix, procedures.save_procedure, methods=["POST"]),
        Route(f"{prefix}/backfill", procedures.backfill_page, methods=["GET"]),
        Route(f"{prefix}/backfill", procedures.backfill, methods=["POST"]),
        Route(prefix + "/{procedure_id}", procedures.procedure_detail, methods=["GET"]),
        Route(prefix + "/{procedure_id}/deprecate", procedures.deprecate_procedure, methods=["POST"]),
    ]


def routes() -> list[Route | Mount]:
    return [
        Route("/", _home),
        Route("/healthz", _healthz),
        Route("/login", auth.login_page, methods=["GET"]),
        Route("/login", auth.login, methods=["POST"]),
        Route("/logout", auth.logout, methods=["POST"]),
        Route("/review", review.review_queue, methods=["GET"]),
        Route("/review/{review_item_id}", review.resolve, methods=["POST"]),
        *_procedure_routes("/memory/learned-procedures"),
        *_procedure_routes("/api/memory/learned-procedures"),
        Route("/memory", memory.users, methods=["GET"]),
        Route("/memory/{user}", memory.user_memories, methods=["GET"]),
        Route("/memory/{user}/m/{memory_id}", memory.memory_detail, methods=["GET"]),
        Route("/forget", forget.forget_page, methods=["GET"]),
        Route("/forget", forget.forget, methods=["POST"]),
        Route("/forget/{deletion_id}", forget.receipt, methods=["GET"]),
        Route("/dead-letters", operations.dead_letters, methods=["GET"]),
        Route("/dead-letters/{sequence}/replay", operations.replay, methods=["POST"]),
        Route("/health", operations.health, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]


def create_app(console: Console) -> ASGIApp:
    app = Starlette(routes=routes())
    app.state.console = console
    return SecurityHeaders(app)
