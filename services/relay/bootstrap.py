"""The relay's composition root: settings from the environment, and the wiring of its adapters.

Every number of the timing contract (see `RelayTiming`) is a setting, checked at start-up:

| setting | default | meaning |
|---|---|---|
| MEMLOOP_RELAY_LEASE_SECONDS | 30 | how long a claim hides a row from other relays |
| MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS | 5 | how long a PubAck is awaited |
| MEMLOOP_RELAY_BACKOFF_MAX_SECONDS | 5 | longest pause between attempts while NATS is down |
| MEMLOOP_RELAY_RETRY_HORIZON_SECONDS | 600 | longest span in which one event may be published again |
| MEMLOOP_RELAY_DUPLICATE_WINDOW_SECONDS | 3600 | the stream's duplicate window; must exceed the horizon |
| MEMLOOP_RELAY_BATCH_SIZE / MAX_IN_FLIGHT | 256 / 1024 | rows per claim / unacknowledged publishes |
| MEMLOOP_RELAY_POLL_SECONDS | 5 | backstop poll when no NOTIFY arrives |
| MEMLOOP_RELAY_RETENTION_SECONDS | 604800 | published rows are pruned after this long (7 days) |
| MEMLOOP_RELAY_DB_PASSWORD (or _FILE) | — | the relay role's password (else libpq's own sources) |
| MEMLOOP_STREAM_REPLICAS | 1 | replicas of the learning stream (3 on a JetStream cluster); raised, never lowered |
| MEMLOOP_FAULT_RELAY_CRASH_AFTER_PUBLISH | off | test hook: SIGKILL self after the first PubAck, before marking |
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import make_url

from services.common.db import url_for_role
from services.common.settings import (
    CommonSettings,
    app_role_password,
    database_url_for,
    env_float,
    env_int,
    env_str,
    stream_replicas,
)
from services.relay.domain.model import RelayTiming, TimingError
from services.relay.service.relay import RelayConfig


@dataclass(frozen=True)
class RelaySettings:
    common: CommonSettings
    conninfo: str
    nats_url: str
    subject_prefix: str
    stream_name: str
    config: RelayConfig
    stream_replicas: int = 1

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RelaySettings:
        env = os.environ if env is None else env
        try:
            timing = RelayTiming(
                lease_seconds=env_float(env, "MEMLOOP_RELAY_LEASE_SECONDS", 30.0),
                publish_timeout_seconds=env_float(env, "MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS", 5.0),
                backoff_max_seconds=env_float(env, "MEMLOOP_RELAY_BACKOFF_MAX_SECONDS", 5.0),
                retry_horizon_seconds=env_float(env, "MEMLOOP_RELAY_RETRY_HORIZON_SECONDS", 600.0),
                duplicate_window_seconds=env_float(env, "MEMLOOP_RELAY_DUPLICATE_WINDOW_SECONDS", 3600.0),
            ).check()
        except TimingError as exc:
            raise SystemExit(f"relay timing settings are inconsistent: {exc}") from exc
        config = RelayConfig(
            claimer=f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}",
            batch_size=env_int(env, "MEMLOOP_RELAY_BATCH_SIZE", 256),
            max_in_flight=env_int(env, "MEMLOOP_RELAY_MAX_IN_FLIGHT", 1024),
            timing=timing,
            poll_interval_seconds=env_float(env, "MEMLOOP_RELAY_POLL_SECONDS", 5.0),
            retention_seconds=env_float(env, "MEMLOOP_RELAY_RETENTION_SECONDS", 7 * 24 * 3600.0),
            prune_interval_seconds=env_float(env, "MEMLOOP_RELAY_PRUNE_INTERVAL_SECONDS", 60.0),
            metrics_interval_seconds=env_float(env, "MEMLOOP_RELAY_METRICS_INTERVAL_SECONDS", 2.0),
            crash_after_first_publish=env_str(env, "MEMLOOP_FAULT_RELAY_CRASH_AFTER_PUBLISH") in {"1", "true"},
        )
        role = env_str(env, "MEMLOOP_RELAY_DB_ROLE", "memloop_relay_app")
        return cls(
            common=CommonSettings.from_env("relay", env),
            conninfo=libpq_url(url_for_role(database_url_for(env, "serving"), role, app_role_password(env, "relay"))),
            nats_url=env_str(env, "MEMLOOP_NATS_URL", "nats://127.0.0.1:4222"),
            subject_prefix=env_str(env, "MEMLOOP_SUBJECT_PREFIX", "memloop"),
            stream_name=env_str(env, "MEMLOOP_LEARNING_STREAM", "MEMLOOP_LEARNING"),
            config=config,
            stream_replicas=stream_replicas(env),
        )


def libpq_url(sqlalchemy_url: str) -> str:
    """`postgresql+psycopg://…` (the project's URL form) → `postgresql://…` for psycopg itself."""
    return make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)
