"""The console's settings, read from the environment once in the composition root.

The console holds no database and no service credentials of its own: it needs to know where the
services listen, the token issuer's PUBLIC keys (to read the signed-in person's tenant and roles, so
it can hide what they may not do — it can verify tokens but never mint one) and, for the operator
pages, where NATS and the metrics endpoints are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from services.common.auth import TokenVerifier
from services.common.nats_access import NatsAccess
from services.common.settings import env_int, env_secret, env_str, nats_access, token_verifier
from services.common.tls import TlsFiles, tls_from_env


@dataclass(frozen=True)
class ConsoleSettings:
    """Everything the console process needs; built by `from_env` or directly by tests."""

    verifier: TokenVerifier
    memory_target: str
    serving_target: str
    host: str = "127.0.0.1"
    port: int = 8080
    nats_url: str = ""
    subject_prefix: str = "memloop"
    learning_stream: str = "MEMLOOP_LEARNING"
    span_file: str = ""
    metrics_targets: tuple[tuple[str, str], ...] = ()
    secure_cookies: bool = False
    rpc_timeout: float = 15.0
    tls: TlsFiles | None = None
    """MEMLOOP_TLS=on: the console's channels to memory and serving speak mTLS with these files."""
    nats: NatsAccess = field(default_factory=NatsAccess)
    """The console's NATS user (the dead-letter page) and TLS."""
    csrf_secret: str = ""
    """Keys the CSRF tokens; empty means a random key per process (forms rendered before a restart
    must then be reloaded, sessions survive because they are the signed-in person's token)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ConsoleSettings:
        env = os.environ if env is None else env
        return cls(
            verifier=token_verifier(env),
            csrf_secret=env_secret(env, "MEMLOOP_CONSOLE_CSRF_SECRET"),
            memory_target=env_str(env, "MEMLOOP_MEMORY_TARGET", "127.0.0.1:50052"),
            serving_target=env_str(env, "MEMLOOP_SERVING_TARGET", "127.0.0.1:50051"),
            host=env_str(env, "MEMLOOP_CONSOLE_HOST", "127.0.0.1"),
            port=env_int(env, "MEMLOOP_CONSOLE_PORT", 8080),
            nats_url=env_str(env, "MEMLOOP_NATS_URL"),
            subject_prefix=env_str(env, "MEMLOOP_SUBJECT_PREFIX", "memloop"),
            learning_stream=env_str(env, "MEMLOOP_LEARNING_STREAM", "MEMLOOP_LEARNING"),
            span_file=env_str(env, "MEMLOOP_SPAN_FILE"),
            metrics_targets=parse_metrics_targets(env_str(env, "MEMLOOP_CONSOLE_METRICS")),
            secure_cookies=env_str(env, "MEMLOOP_CONSOLE_SECURE_COOKIES", "0") in ("1", "true", "yes"),
            tls=tls_from_env(env),
            nats=nats_access(env),
        )


def parse_metrics_targets(raw: str) -> tuple[tuple[str, str], ...]:
    """`relay=http://h:p/metrics,worker=...` → ((name, url), ...); a malformed entry stops the process."""
    targets = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        name, sep, url = part.partition("=")
        if not sep or not name.strip() or not url.strip().startswith(("http://", "https://")):
            raise SystemExit(f"MEMLOOP_CONSOLE_METRICS entry {part!r} is not name=http(s)://host:port/metrics")
        targets.append((name.strip(), url.strip()))
    return tuple(targets)
