"""Process settings, read from the environment once, in a composition root, and passed down.

Adapters never read os.environ: a setting they need arrives through these frozen objects.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


def env_str(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(name, default).strip() or default


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


def database_url_for(env: Mapping[str, str], service: str) -> str:
    """One URL per owning service (MEMLOOP_<SERVICE>_DATABASE_URL) or the shared MEMLOOP_DATABASE_URL."""
    url = env_str(env, f"MEMLOOP_{service.upper()}_DATABASE_URL") or env_str(env, "MEMLOOP_DATABASE_URL")
    if not url:
        raise SystemExit(f"no database configured: set MEMLOOP_{service.upper()}_DATABASE_URL or MEMLOOP_DATABASE_URL")
    return url


@dataclass(frozen=True)
class CommonSettings:
    """What every memloop process needs: identity, ports, auth secret and telemetry sinks."""

    service_name: str
    grpc_host: str
    grpc_port: int
    metrics_port: int
    auth_secret: str
    log_level: str
    otlp_endpoint: str
    span_file: str
    drain_seconds: float

    @classmethod
    def from_env(cls, service_name: str, env: Mapping[str, str] | None = None) -> CommonSettings:
        env = os.environ if env is None else env
        secret = env_str(env, "MEMLOOP_AUTH_SECRET")
        if not secret:
            raise SystemExit("MEMLOOP_AUTH_SECRET is required (the launcher generates one)")
        return cls(
            service_name=service_name,
            grpc_host=env_str(env, "MEMLOOP_GRPC_HOST", "127.0.0.1"),
            grpc_port=env_int(env, "MEMLOOP_GRPC_PORT", 0),
            metrics_port=env_int(env, "MEMLOOP_METRICS_PORT", 0),
            auth_secret=secret,
            log_level=env_str(env, "MEMLOOP_LOG_LEVEL", "INFO"),
            otlp_endpoint=env_str(env, "MEMLOOP_OTLP_ENDPOINT"),
            span_file=env_str(env, "MEMLOOP_SPAN_FILE"),
            drain_seconds=env_float(env, "MEMLOOP_DRAIN_SECONDS", 10.0),
        )
