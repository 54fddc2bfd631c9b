"""The relay's composition root: settings from the environment, and `build(settings) -> App`.

Start-up order is readiness order: database (waits for serving's schema), NATS, the stream; only
then does the tiny gRPC health server report SERVING (`services.common.app.run` starts it after the
start hook), so a launcher waiting on health knows the relay can publish. SIGTERM stops claiming,
lets in-flight PubAcks arrive and marks them.

Every number of the timing contract (see `RelayTiming`) is a setting, checked at start-up:

| setting | default | meaning |
|---|---|---|
| MEMLOOP_RELAY_LEASE_SECONDS | 30 | how long a claim hides a row from other relays |
| MEMLOOP_RELAY_PUBLISH_TIMEOUT_SECONDS | 5 | how long a PubAck is awaited |
| MEMLOOP_RELAY_BACKOFF_MAX_SECONDS | 5 | longest pause between attempts while NATS is down |
| MEMLOOP_RELAY_RETRY_HORIZON_SECONDS | 600 | longest span in which one event may be published again |
| MEMLOOP_RELAY_DUPLICATE_WINDOW_SECONDS | 3600 | the stream's duplicate window; must exceed the horizon |
| MEMLOOP_RELAY_BATCH_SIZE / MAX_IN_FLIGHT | 512 / 1024 | rows per claim / unacknowledged publishes |
| MEMLOOP_RELAY_POLL_SECONDS | 5 | backstop poll when no NOTIFY arrives |
| MEMLOOP_RELAY_CLAIM_LINGER_MS | 250 | an idle relay woken by NOTIFY claims no sooner than this after its last claim |
| MEMLOOP_RELAY_RETENTION_SECONDS | 604800 | published rows are pruned after this long (7 days) |
| MEMLOOP_RELAY_SYNCHRONOUS_COMMIT | off | `off`: claims and marks skip the WAL flush wait (`RelaySettings`) |
| MEMLOOP_RELAY_DB_PASSWORD (or _FILE) | — | the relay role's password (else libpq's own sources) |
| MEMLOOP_STREAM_REPLICAS | 1 | replicas of the learning stream (3 on a JetStream cluster); raised, never lowered |
| MEMLOOP_FAULT_RELAY_CRASH_AFTER_PUBLISH | off | test hook: SIGKILL self after the first PubAck, before marking |
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from nats.aio.client import Client
from sqlalchemy import make_url

from services.common.app import App
from services.common.db import url_for_role
from services.common.priority import LearningPriority, lower_group_once_started, lower_process
from services.common.settings import (
    CommonSettings,
    app_role_password,
    database_url_for,
    env_float,
    env_int,
    env_str,
    stream_replicas,
)
from services.relay.adapters.jetstream import JetStreamPublisher, StreamSpec, connect_until_reachable, ensure_stream
from services.relay.adapters.metrics import PrometheusRelayMetrics
from services.relay.adapters.pg_outbox import PgOutboxStore
from services.relay.domain.model import RelayTiming, TimingError
from services.relay.service.relay import Relay, RelayConfig

_log = logging.getLogger("services.relay")


@dataclass(frozen=True)
class RelaySettings:
    common: CommonSettings
    conninfo: str
    nats_url: str
    subject_prefix: str
    stream_name: str
    config: RelayConfig
    stream_replicas: int = 1
    learning: LearningPriority = field(default_factory=LearningPriority)
    synchronous_commit: bool = False
    """Whether the relay's own statements wait for their WAL flush. Nothing is acknowledged on a
    relay commit: a claim is a lease, a mark a note that JetStream has the event. A server crash
    can lose the last fraction of a second of them (never a part of one), which leaves rows
    unclaimed or unmarked: the state of a relay that died between PubAck and mark, which rule 2 of
    the relay loop already handles (the row is published again and JetStream's duplicate window
    drops the copy). Serving's commits, which an agent's answer does wait for, stay synchronous;
    off, the relay's flushes no longer queue ahead of them on the shared WAL."""

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
            batch_size=env_int(env, "MEMLOOP_RELAY_BATCH_SIZE", RelayConfig.batch_size),
            max_in_flight=env_int(env, "MEMLOOP_RELAY_MAX_IN_FLIGHT", 1024),
            timing=timing,
            poll_interval_seconds=env_float(env, "MEMLOOP_RELAY_POLL_SECONDS", 5.0),
            claim_linger_seconds=env_float(env, "MEMLOOP_RELAY_CLAIM_LINGER_MS", 250.0) / 1000.0,
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
            learning=LearningPriority.from_env(env),
            synchronous_commit=_on_off(env, "MEMLOOP_RELAY_SYNCHRONOUS_COMMIT", "off"),
        )


def _on_off(env: Mapping[str, str], name: str, default: str) -> bool:
    value = env_str(env, name, default).lower()
    if value not in ("on", "off"):
        raise SystemExit(f"{name} must be 'on' or 'off', not {value!r}")
    return value == "on"


def libpq_url(sqlalchemy_url: str) -> str:
    """`postgresql+psycopg://…` (the project's URL form) → `postgresql://…` for psycopg itself."""
    return make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)


def build(settings: RelaySettings) -> App:
    """The relay process: open the outbox and NATS, ensure the stream, publish until stopped.

    The relay is learning's first step, so it yields to serving as the worker does
    (MEMLOOP_LEARNING_PRIORITY), lowered before it starts a thread; its database sessions follow
    (`PgOutboxStore` gives the backend the relay's priority), so claiming and marking outbox rows
    never takes a core from serving's own transactions on the same server."""
    lower_process(settings.learning)
    stopping = asyncio.Event()
    process = _RelayProcess(settings, stopping)
    return App(
        settings.common,
        tasks=[process.publish],
        on_start=[process.open, lower_group_once_started(settings.learning)],
        on_stop=[process.close],
        max_workers=2,
        stopping=stopping,
    )


class _RelayProcess:
    """The relay's connections: opened by the start hook inside the process's event loop (psycopg's
    and nats' async clients bind to it), closed by the stop hook, whatever point start-up reached."""

    def __init__(self, settings: RelaySettings, stopping: asyncio.Event) -> None:
        self._settings, self._stopping = settings, stopping
        self._store: PgOutboxStore | None = None
        self._client: Client | None = None
        self._relay: Relay | None = None

    async def open(self) -> None:
        settings, timing = self._settings, self._settings.config.timing
        self._store = await PgOutboxStore.open(settings.conninfo, synchronous_commit=settings.synchronous_commit)
        self._client = await connect_until_reachable(
            settings.nats_url, name=f"memloop-relay-{settings.config.claimer}", access=settings.common.nats
        )
        publisher = JetStreamPublisher(
            self._client,
            subject_prefix=settings.subject_prefix,
            stream=settings.stream_name,
            publish_timeout_seconds=timing.publish_timeout_seconds,
        )
        spec = StreamSpec(
            settings.stream_name, settings.subject_prefix, timing.duplicate_window_seconds, settings.stream_replicas
        )
        await ensure_stream(publisher.jetstream, spec)
        self._relay = Relay(self._store, publisher, PrometheusRelayMetrics(), settings.config)
        _log.info(
            "relay %s publishing to stream %s (duplicate window %gs, retry horizon %gs)",
            settings.config.claimer,
            settings.stream_name,
            timing.duplicate_window_seconds,
            timing.retry_horizon_seconds,
        )

    async def publish(self) -> None:
        assert self._relay is not None, "the start hook opens the relay before tasks run"
        try:
            await self._relay.run(self._stopping)
        finally:
            _log.info("relay %s stopping: in-flight PubAcks drained and marked", self._settings.config.claimer)

    async def close(self) -> None:
        if self._store is not None:
            await self._store.close()
        if self._client is not None:
            await self._client.close()
