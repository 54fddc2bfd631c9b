"""Who is signed in, what they may do, and the CSRF token that proves a form came from us.

Sign-in is with a bearer token from the issuer (an `Authenticator`; an OIDC code flow would be a
second implementation that ends with the same kind of token). The token itself is the session: it
sits in an HttpOnly, SameSite=Strict cookie and goes to the services on every call, so the tenant
is the token's and nothing the browser sends can change it. The console keeps no session store.

CSRF: every state-changing request authenticated by the cookie must carry `csrf_token` (form) or
`X-CSRF-Token` (htmx) equal to HMAC(key, token): unguessable without the cookie, bound to this
session. A request authenticated by an `Authorization: Bearer` header (tools using the JSON API)
carries no ambient credential, so it needs none.

Roles: the console hides what a role cannot do, following the services' role tables, but never
relies on that: the services check the token's roles on every call.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Protocol

import jwt

from services.common.auth import Principal, TokenVerifier
from services.common.errors import Unauthenticated

SESSION_COOKIE = "memloop_session"
LOGIN_COOKIE = "memloop_login_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"

# What each console action needs, mirroring the services' per-RPC role tables
# (services/memory/entrypoints/grpc_server.py and procedures_grpc.py). The services enforce it.
CAPABILITIES: dict[str, frozenset[str]] = {
    "review": frozenset({"reviewer", "admin"}),
    "procedures.write": frozenset({"decide", "admin"}),
    "procedures.backfill": frozenset({"admin"}),
    "forget": frozenset({"admin"}),
    "dead_letters.replay": frozenset({"admin"}),
}


class Authenticator(Protocol):
    """Turns a presented credential into a principal, or raises Unauthenticated."""

    def authenticate(self, token: str) -> Principal: ...


class VerifierAuthenticator:
    """The project's issuer: Ed25519 tokens verified against its public key set (the services' check)."""

    def __init__(self, verifier: TokenVerifier) -> None:
        self._verifier = verifier

    def authenticate(self, token: str) -> Principal:
        return self._verifier.verify(token)


def token_expiry(token: str) -> int:
    """Seconds until the (already verified) token expires, for the cookie's Max-Age."""
    claims = jwt.decode(token, options={"verify_signature": False})
    return max(0, int(claims.get("exp", 0)) - int(time.time()))


@dataclass(frozen=True)
class Viewer:
    """The signed-in person for one request."""

    principal: Principal
    token: str
    csrf: str
    via_cookie: bool

    @property
    def tenant(self) -> str:
        return self.principal.tenant

    @property
    def subject(self) -> str:
        return self.principal.subject

    def can(self, action: str) -> bool:
        return bool(self.principal.roles & CAPABILITIES[action])

    @property
    def roles(self) -> str:
        return ", ".join(sorted(self.principal.roles))


class CsrfSigner:
    """HMAC of the session token under a key derived from the console's secret."""

    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(f"memloop-console-csrf:{secret}".encode()).digest()

    def token_for(self, session: str) -> str:
        return hmac.new(self._key, session.encode(), hashlib.sha256).hexdigest()

    def valid(self, session: str, presented: str) -> bool:
        return bool(presented) and hmac.compare_digest(self.token_for(session), presented)


def viewer_from(
    authenticator: Authenticator, signer: CsrfSigner, cookie: str | None, authorization: str | None
) -> Viewer | None:
    """The viewer of a request, from its bearer header or else its session cookie; None if neither verifies."""
    header = authorization or ""
    token, via_cookie = (header[7:].strip(), False) if header.lower().startswith("bearer ") else (cookie or "", True)
    if not token:
        return None
    try:
        principal = authenticator.authenticate(token)
    except Unauthenticated:
        return None
    return Viewer(principal, token, signer.token_for(token), via_cookie)
