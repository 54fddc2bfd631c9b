"""Process settings, read from the environment once, in a composition root, and passed down.

Adapters never read os.environ: a setting they need arrives through these frozen objects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from services.common.auth import TokenVerifier
from services.common.auth_keys import InvalidKey, PublicKeySet
from services.common.nats_access import NatsAccess
from services.common.tls import TlsFiles, tls_from_env


def env_str(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(name, default).strip() or default


def env_secret(env: Mapping[str, str], name: str) -> str:
    """A secret from NAME, or else from the file named by NAME_FILE (trailing newline stripped).

    Why the file form: container platforms hand secrets over as mounted files (compose secrets
    under /run/secrets, Kubernetes Secret volumes), which keeps them out of the process table and
    `docker inspect`. Setting both is refused: which one wins would be a guess.
    """
    direct = env_str(env, name)
    path = env_str(env, f"{name}_FILE")
    if direct and path:
        raise SystemExit(f"set {name} or {name}_FILE, not both")
    if not path:
        return direct
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError as exc:
        raise SystemExit(f"setting {name}_FILE={path!r}: cannot read it ({exc.strerror})") from exc


def env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise SystemExit(f"setting {name}={raw!r} is not an integer") from exc


def env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise SystemExit(f"setting {name}={raw!r} is not a number") from exc


def stream_replicas(env: Mapping[str, str]) -> int:
    """MEMLOOP_STREAM_REPLICAS (default 1): replicas of the learning and dead-letter streams.

    The relay and the worker both create streams if missing, so both read the one setting; a
    JetStream cluster of three runs them at 3 (R3). JetStream allows 1 to 5.
    """
    replicas = env_int(env, "MEMLOOP_STREAM_REPLICAS", 1)
    if not 1 <= replicas <= 5:
        raise SystemExit(f"setting MEMLOOP_STREAM_REPLICAS={replicas} must be between 1 and 5")
    return replicas


def database_url_for(env: Mapping[str, str], service: str) -> str:
    """One URL per owning service (MEMLOOP_<SERVICE>_DATABASE_URL) or the shared MEMLOOP_DATABASE_URL.

    Either may come from a file (`_FILE`: the owner's URL carries a password). A plain libpq URL
    (`postgresql://` or `postgres://`, as an operator such as CloudNativePG writes it into its
    Secret) is read with the psycopg driver, the only one installed.
    """
    name = f"MEMLOOP_{service.upper()}_DATABASE_URL"
    url = env_secret(env, name) or env_secret(env, "MEMLOOP_DATABASE_URL")
    if not url:
        raise SystemExit(f"no database configured: set {name} or MEMLOOP_DATABASE_URL (or their _FILE forms)")
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


def app_role_password(env: Mapping[str, str], service: str) -> str:
    """MEMLOOP_<SERVICE>_DB_PASSWORD (or _FILE): the password of the role `service` connects as.

    Empty means "let libpq decide" (trust on a laptop, PGPASSWORD or a pgpass file elsewhere).
    """
    return env_secret(env, f"MEMLOOP_{service.upper()}_DB_PASSWORD")


@dataclass(frozen=True)
class CommonSettings:
    """What every memloop process needs: identity, ports, how to verify tokens, telemetry sinks."""

    service_name: str
    grpc_host: str
    grpc_port: int
    metrics_port: int
    auth: TokenVerifier
    log_level: str
    otlp_endpoint: str
    span_file: str
    drain_seconds: float
    # MEMLOOP_TLS=on: TLS with client certificates on the gRPC server and every channel to a peer.
    tls: TlsFiles | None = None
    # This process's NATS user and TLS (used by the services that talk to NATS).
    nats: NatsAccess = field(default_factory=NatsAccess)

    @classmethod
    def from_env(cls, service_name: str, env: Mapping[str, str] | None = None) -> CommonSettings:
        env = os.environ if env is None else env
        return cls(
            service_name=service_name,
            grpc_host=env_str(env, "MEMLOOP_GRPC_HOST", "127.0.0.1"),
            grpc_port=env_int(env, "MEMLOOP_GRPC_PORT", 0),
            metrics_port=env_int(env, "MEMLOOP_METRICS_PORT", 0),
            auth=token_verifier(env),
            log_level=env_str(env, "MEMLOOP_LOG_LEVEL", "INFO"),
            otlp_endpoint=env_str(env, "MEMLOOP_OTLP_ENDPOINT"),
            span_file=env_str(env, "MEMLOOP_SPAN_FILE"),
            drain_seconds=env_float(env, "MEMLOOP_DRAIN_SECONDS", 10.0),
            tls=tls_from_env(env),
            nats=nats_access(env),
        )


_NATS_USER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def nats_access(env: Mapping[str, str]) -> NatsAccess:
    """MEMLOOP_NATS_USER with MEMLOOP_NATS_PASSWORD (or _FILE); TLS from MEMLOOP_NATS_TLS(_*_FILE).

    No user means none is sent (a server without users accepts that). MEMLOOP_NATS_TLS and its
    files default to the gRPC ones (MEMLOOP_TLS, MEMLOOP_TLS_*_FILE): one switch turns TLS on
    everywhere; a NATS served with certificates from another CA (its Helm chart's) names its own.
    """
    user = env_str(env, "MEMLOOP_NATS_USER")
    password = env_secret(env, "MEMLOOP_NATS_PASSWORD")
    if bool(user) != bool(password):
        raise SystemExit("set MEMLOOP_NATS_USER and MEMLOOP_NATS_PASSWORD(_FILE) together, or neither")
    if user and not _NATS_USER_NAME.match(user):
        raise SystemExit(f"setting MEMLOOP_NATS_USER={user!r}: letters, digits, '_' and '-' only")
    switch = env_str(env, "MEMLOOP_NATS_TLS") or env_str(env, "MEMLOOP_TLS", "off")
    merged = {**env, "MEMLOOP_NATS_TLS": switch}
    if switch.lower() == "on":
        for suffix in ("_CERT_FILE", "_KEY_FILE", "_CA_FILE"):
            merged[f"MEMLOOP_NATS_TLS{suffix}"] = env_str(env, f"MEMLOOP_NATS_TLS{suffix}") or env_str(
                env, f"MEMLOOP_TLS{suffix}"
            )
    return NatsAccess(user=user, password=password, tls=tls_from_env(merged, "MEMLOOP_NATS_TLS"))


def token_verifier(env: Mapping[str, str]) -> TokenVerifier:
    """How a service checks bearer tokens: the issuer's Ed25519 public keys, never a shared secret.

    MEMLOOP_AUTH_PUBLIC_KEYS (or _FILE): one or more PEM public keys (several during a rotation).
    MEMLOOP_AUTH_SECRET (or _FILE) is the legacy HS256 secret, with which any service could mint
    tokens for any tenant; it is refused unless MEMLOOP_AUTH_ALLOW_HS256=on (a migration window).
    """
    keys_text = env_secret(env, "MEMLOOP_AUTH_PUBLIC_KEYS")
    secret = env_secret(env, "MEMLOOP_AUTH_SECRET")
    allow_hs256 = env_str(env, "MEMLOOP_AUTH_ALLOW_HS256", "off").lower()
    if allow_hs256 not in ("on", "off"):
        raise SystemExit(f"setting MEMLOOP_AUTH_ALLOW_HS256={allow_hs256!r} must be 'on' or 'off'")
    if secret and allow_hs256 != "on":
        raise SystemExit(
            "MEMLOOP_AUTH_SECRET is a shared HS256 secret, no longer accepted: set MEMLOOP_AUTH_PUBLIC_KEYS(_FILE)"
            " to the issuer's Ed25519 public keys (MEMLOOP_AUTH_ALLOW_HS256=on accepts both while migrating)"
        )
    if not keys_text and not secret:
        raise SystemExit(
            "MEMLOOP_AUTH_PUBLIC_KEYS (or MEMLOOP_AUTH_PUBLIC_KEYS_FILE) is required: the token issuer's"
            " Ed25519 public keys (`memloop up` generates a pair; `memloop issuer-key` writes one)"
        )
    try:
        keys = PublicKeySet.from_pem_bundle(keys_text) if keys_text else None
    except InvalidKey as exc:
        raise SystemExit(f"setting MEMLOOP_AUTH_PUBLIC_KEYS: {exc}") from exc
    return TokenVerifier(keys, hs256_secret=secret)
