"""Sign in with a token, sign out. The login form has its own double-submit CSRF token (there is no
session yet to bind one to), so a third-party page cannot sign a browser in as someone else."""

from __future__ import annotations

import secrets
from urllib.parse import urlparse

from starlette.requests import Request
from starlette.responses import Response

from services.common.errors import Unauthenticated
from services.console.web.common import console_of, endpoint, form_of, redirect, render
from services.console.web.session import CSRF_FIELD, LOGIN_COOKIE, SESSION_COOKIE, Viewer, token_expiry


def _safe_next(target: str) -> str:
    """Only a path of this site: never an open redirect."""
    parsed = urlparse(target)
    if parsed.scheme or parsed.netloc or not target.startswith("/") or target.startswith("//"):
        return "/review"
    return target


async def login_page(request: Request) -> Response:
    nonce = secrets.token_urlsafe(32)
    context = {"login_csrf": nonce, "next": _safe_next(request.query_params.get("next", "/review")), "error": ""}
    response = render(request, None, "login.html", context)
    _set_cookie(request, response, LOGIN_COOKIE, nonce, 600)
    return response


async def login(request: Request) -> Response:
    form = await form_of(request)
    console = console_of(request)
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    if not nonce or not secrets.compare_digest(nonce, form.get(CSRF_FIELD, "")):
        return render(
            request,
            None,
            "error.html",
            {"status": 403, "code": "CSRF_REJECTED", "message": "reload the sign-in page"},
            403,
        )
    token = form.get("token", "").strip()
    try:
        console.authenticator.authenticate(token)
    except Unauthenticated as exc:
        context = {"login_csrf": nonce, "next": _safe_next(form.get("next", "")), "error": exc.message}
        return render(request, None, "login.html", context, 401)
    response = redirect(_safe_next(form.get("next", "/review")))
    _set_cookie(request, response, SESSION_COOKIE, token, token_expiry(token))
    response.delete_cookie(LOGIN_COOKIE, path="/")
    return response


@endpoint
async def logout(request: Request, viewer: Viewer) -> Response:
    response = redirect("/login")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=console_of(request).secure_cookies,
    )
