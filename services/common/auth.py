"""Signed bearer tokens and the server interceptor that checks them.

Tokens are JWTs (subject, tenant, roles, expiry) signed with the issuer's Ed25519 key (EdDSA) and
naming that key (`kid`); services verify them against a public key set and cannot mint any
(see `auth_keys`). HS256 with a shared secret is legacy: a verifier accepts it only when built
with that secret, which services do only when MEMLOOP_AUTH_ALLOW_HS256=on.
A service token for the loop's own workers carries tenant "*" and the `service` role; nothing
else may address every tenant.
The interceptor authenticates, then authorizes from the one table in `services.common.access`:
the caller's roles against the method, and the tenant the request names against the token's,
before the servicer runs, so permission is always checked before existence.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
import jwt

from services.common import access
from services.common.auth_keys import ALGORITHM as EDDSA
from services.common.auth_keys import PublicKeySet, SigningKey
from services.common.errors import MemloopError, PermissionDenied, Unauthenticated

ALL_TENANTS = "*"
SERVICE_ROLE = "service"
HS256 = "HS256"
_UNAUTHENTICATED_METHODS = frozenset(
    {
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)


@dataclass(frozen=True)
class Principal:
    """Who is calling, as proven by the token."""

    subject: str
    tenant: str
    roles: frozenset[str]

    def can_act_for(self, tenant: str) -> bool:
        return self.tenant == tenant or (self.tenant == ALL_TENANTS and SERVICE_ROLE in self.roles)


_current: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("memloop_principal", default=None)


def issue_token(
    key: SigningKey | str, *, subject: str, tenant: str, roles: Iterable[str], ttl_seconds: int = 3600
) -> str:
    """Sign a token with the issuer's key (EdDSA, with its `kid`); a str is a legacy HS256 secret.

    Used by the CLI, the launcher (service tokens) and tests: whoever holds the issuer key.
    """
    now = int(time.time())
    claims = {"sub": subject, "tenant": tenant, "roles": sorted(roles), "iat": now, "exp": now + ttl_seconds}
    if isinstance(key, SigningKey):
        return jwt.encode(claims, key.private, algorithm=EDDSA, headers={"kid": key.kid})
    return jwt.encode(claims, key, algorithm=HS256)


class TokenVerifier:
    """Checks tokens against the public key set (and, only if given one, a legacy HS256 secret)."""

    _CACHE_SIZE = 4096

    def __init__(
        self, keys: PublicKeySet | None, *, hs256_secret: str = "", clock: Callable[[], float] = time.time
    ) -> None:
        if keys is None and not hs256_secret:
            raise ValueError("a token verifier needs public keys or a legacy HS256 secret")
        self._keys = keys
        self._secret = hs256_secret
        self._clock = clock
        # Tokens already verified, with their expiry: the loop's peers send the same token on every
        # call, and a signature check is most of an interceptor's cost. The key set never changes
        # in a running process, so only the expiry is left to check again.
        self._verified: dict[str, tuple[Principal, float]] = {}

    def verify(self, token: str) -> Principal:
        """Verify signature, key and expiry; raise Unauthenticated with the reason otherwise."""
        cached = self._verified.get(token)
        if cached is not None:
            principal, expires = cached
            if self._clock() < expires:
                return principal
            self._verified.pop(token, None)
            raise Unauthenticated("token expired", reason="TOKEN_EXPIRED")
        principal, expires = self._verify(token)
        if len(self._verified) >= self._CACHE_SIZE:
            self._verified.clear()
        self._verified[token] = (principal, expires)
        return principal

    def _verify(self, token: str) -> tuple[Principal, float]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise Unauthenticated(f"invalid token: {exc}", reason="TOKEN_INVALID") from exc
        algorithm = header.get("alg")
        key: Any
        if algorithm == EDDSA and self._keys is not None:
            key = self._keys.get(str(header.get("kid", "")))
            if key is None:
                raise Unauthenticated("token signed by a key that is not in the issuer key set", reason="TOKEN_INVALID")
        elif algorithm == HS256 and self._secret:
            key = self._secret
        else:
            raise Unauthenticated(f"token algorithm {algorithm!r} is not accepted", reason="TOKEN_INVALID")
        return _decode(token, key, str(algorithm))


def _decode(token: str, key: Any, algorithm: str) -> tuple[Principal, float]:
    """The token's principal and its expiry (epoch seconds)."""
    try:
        claims = jwt.decode(token, key, algorithms=[algorithm], options={"require": ["exp", "sub"]})
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("token expired", reason="TOKEN_EXPIRED") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(f"invalid token: {exc}", reason="TOKEN_INVALID") from exc
    tenant = claims.get("tenant")
    roles = claims.get("roles", [])
    if not isinstance(tenant, str) or not tenant or not isinstance(roles, list):
        raise Unauthenticated("token lacks tenant or roles", reason="TOKEN_INVALID")
    principal = Principal(subject=str(claims["sub"]), tenant=tenant, roles=frozenset(str(r) for r in roles))
    return principal, float(claims["exp"])


def verify_token(verifier: TokenVerifier | str, token: str) -> Principal:
    """Verify a token; a str verifier is a legacy HS256 secret (the only algorithm it then accepts)."""
    if isinstance(verifier, str):
        verifier = TokenVerifier(None, hs256_secret=verifier)
    return verifier.verify(token)


def current_principal() -> Principal:
    principal = _current.get()
    if principal is None:
        raise Unauthenticated("no authenticated principal", reason="TOKEN_MISSING")
    return principal


def authorize_tenant(tenant: str) -> Principal:
    """Check the caller may act for `tenant`; returns the principal (its subject is who acted).

    The interceptor already checked roles and the request's tenant; servicers call this for the
    principal and as a second check of the tenant they are about to use.
    """
    principal = current_principal()
    _check_tenant(principal, tenant)
    return principal


def _check_tenant(principal: Principal, tenant: str) -> None:
    if not principal.can_act_for(tenant):
        raise PermissionDenied(
            f"token for tenant {principal.tenant[:64]!r} may not access tenant {tenant[:64]!r}", reason="TENANT_DENIED"
        )


def authorize_call(method: str, principal: Principal) -> None:
    """Raise PermissionDenied unless one of the principal's roles may call `method` (the table)."""
    rule = access.rule_for(method)
    if rule is None:
        raise PermissionDenied(f"{method} is not open to any role", reason="ROLE_REQUIRED")
    if not (rule.roles & principal.roles):
        raise PermissionDenied(
            f"{method.rsplit('/', 1)[-1]} requires one of roles {sorted(rule.roles)}", reason="ROLE_REQUIRED"
        )


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class AuthInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Authenticate and authorize every call except health and reflection, from the access table.

    Roles are checked before the request is read; the tenant the request names (the table says
    which field) is checked once it is deserialized, before the servicer runs. An empty tenant is
    left to the servicer's validation (INVALID_ARGUMENT naming the field).
    """

    def __init__(self, verifier: TokenVerifier | str) -> None:
        self._verifier = TokenVerifier(None, hs256_secret=verifier) if isinstance(verifier, str) else verifier

    def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: grpc.HandlerCallDetails
    ) -> Any:
        handler = continuation(handler_call_details)
        if handler is None or handler_call_details.method in _UNAUTHENTICATED_METHODS:
            return handler
        metadata = dict(handler_call_details.invocation_metadata or ())
        header = str(metadata.get("authorization", ""))
        if not header.lower().startswith("bearer "):
            return _deny(handler, Unauthenticated("missing bearer token", reason="TOKEN_MISSING"))
        try:
            principal = self._verifier.verify(header[7:].strip())
            authorize_call(handler_call_details.method, principal)
        except (Unauthenticated, PermissionDenied) as exc:
            return _deny(handler, exc)
        rule = access.rule_for(handler_call_details.method)
        return _with_principal(handler, principal, rule.tenant_field if rule else "tenant")


def _with_principal(handler: Any, principal: Principal, tenant_field: str) -> Any:
    if handler.unary_unary is None:
        return handler

    inner = handler.unary_unary

    def call(request: Any, context: grpc.ServicerContext) -> Any:
        tenant = access.tenant_of(request, tenant_field)
        if tenant:
            try:
                _check_tenant(principal, tenant)
            except PermissionDenied as exc:
                _abort(context, exc)
        token = _current.set(principal)
        try:
            return inner(request, context)
        finally:
            _current.reset(token)

    return grpc.unary_unary_rpc_method_handler(
        call,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def _abort(context: grpc.ServicerContext, error: MemloopError) -> None:
    from services.common.grpc_errors import abort_with  # local: grpc_errors imports this module's errors

    abort_with(context, error, domain="auth.memloop")


def _deny(handler: Any, error: MemloopError) -> Any:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        _abort(context, error)

    return grpc.unary_unary_rpc_method_handler(
        call,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )
