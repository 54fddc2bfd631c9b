"""Serving's composition root: settings from the environment; `build` migrates and wires the servicer.

MEMLOOP_SERVING_LEARNING — `on` (default) or `off` — is a benchmark/operations switch: `off` commits
the result, tool outcomes and redacted content as usual but writes no outbox row, so nothing of
that request is ever learned. `make bench` uses it as the "learning switched off" baseline; an
operator can use it to shed the loop entirely. Leave it on in production.

MEMLOOP_SERVING_ROLE — `all` (default) or `loop` — lets the loop's calls (the worker's content
reads, memory's deletions, the outbox look-ups) be served by a process of their own, started beside
the agent-facing one on the same database: `loop` refuses HandleRequest and runs all background, at
idle priority, thread and scheduling group (`services.common.priority`). The worker and memory find
it through MEMLOOP_SERVING_LOOP_TARGET (else MEMLOOP_SERVING_TARGET). Why a process and not a pool:
on one host the loop's reads cost serving's process about a third more CPU under learning, all of
it under the GIL that HandleRequest needs; in another process they share neither the GIL nor the
scheduling group, and only the database remains shared.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import sessionmaker

from services.common.app import App
from services.common.db import make_engine, run_migrations, url_for_role
from services.common.gen.memloop.v1 import serving_service_pb2, serving_service_pb2_grpc
from services.common.grpc_server import Registration, full_service_name
from services.common.priority import LearningPriority, loop_executor, lower_group_once_started, lower_process
from services.common.redaction import RedactionMode, Redactor
from services.common.settings import CommonSettings, app_role_password, database_url_for, env_int, env_str
from services.serving.adapters.postgres.new_request import Notify
from services.serving.adapters.postgres.relay_waker import RelayWaker, connect_for_notify
from services.serving.adapters.redaction_memo import MemoRedact
from services.serving.adapters.repository import SqlServingUnitOfWork
from services.serving.entrypoints.grpc_server import ServingServicer
from services.serving.service.ports import ServingUnitOfWork
from services.serving.service.use_cases import ServingDeps

MIGRATIONS_DIR = Path(__file__).parent / "adapters" / "migrations"


@dataclass(frozen=True)
class ServingSettings:
    """Serving's settings. `admin_database_url` runs migrations; the service then connects as `app_role`."""

    common: CommonSettings
    admin_database_url: str
    app_role: str
    pool_size: int
    max_workers: int
    learning: bool = True
    app_password: str = ""  # MEMLOOP_SERVING_DB_PASSWORD(_FILE); empty: libpq's own sources
    # The loop's calls (ReadContent for the worker, DeleteContent for deletions): idle backends.
    background: LearningPriority = field(default_factory=LearningPriority)
    background_workers: int = 2
    role: str = "all"  # or "loop": the loop's calls only, all at idle priority (module docstring)
    notify: str = "coalesce"
    """MEMLOOP_SERVING_NOTIFY: `coalesce` wakes the relays from a thread of its own, one NOTIFY for
    the commits since its last (`postgres.relay_waker`); `after` in a transaction of its own after
    each request's commit, on the request's thread; `commit` inside the request's transaction
    (`postgres.new_request.add_new_request` says why not)."""
    notify_interval_ms: int = 5
    """MEMLOOP_SERVING_NOTIFY_INTERVAL_MS (`coalesce`): at most one NOTIFY per this many ms; the
    first wake after a quiet spell is sent at once."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServingSettings:
        env = os.environ if env is None else env
        max_workers = env_int(env, "MEMLOOP_SERVING_MAX_WORKERS", 16)
        return cls(
            common=CommonSettings.from_env("serving", env),
            admin_database_url=database_url_for(env, "serving"),
            app_role=env_str(env, "MEMLOOP_SERVING_DB_ROLE", "memloop_serving_app"),
            pool_size=env_int(env, "MEMLOOP_SERVING_POOL_SIZE", max_workers),
            max_workers=max_workers,
            learning=_on_off(env, "MEMLOOP_SERVING_LEARNING", default=True),
            app_password=app_role_password(env, "serving"),
            background=LearningPriority.from_env(env),
            background_workers=env_int(env, "MEMLOOP_SERVING_BACKGROUND_WORKERS", 2),
            role=_role(env),
            notify=_notify(env),
            notify_interval_ms=env_int(env, "MEMLOOP_SERVING_NOTIFY_INTERVAL_MS", 5),
        )


ROLES = ("all", "loop")


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """The setting `name`, lower-cased, one of `choices` (the first is the default); else exit naming it."""
    value = env_str(env, name, choices[0]).lower()
    if value not in choices:
        raise SystemExit(f"setting {name}={value!r} must be one of {', '.join(choices)}")
    return value


def _role(env: Mapping[str, str]) -> str:
    return _choice(env, "MEMLOOP_SERVING_ROLE", ROLES)


NOTIFY_MODES = ("coalesce", "after", "commit")


def _notify(env: Mapping[str, str]) -> str:
    return _choice(env, "MEMLOOP_SERVING_NOTIFY", NOTIFY_MODES)


def _on_off(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    value = env_str(env, name, "on" if default else "off").lower()
    if value not in ("on", "off"):
        raise SystemExit(f"setting {name}={value!r} must be 'on' or 'off'")
    return value == "on"


def build(settings: ServingSettings) -> App:
    """Migrate (idempotent, serialised by an advisory lock), then connect as the app role; the
    engine is disposed once the server has drained."""
    loop_only = settings.role == "loop"
    if loop_only:  # all background: every thread (and so every backend it uses) idle, before any starts
        lower_process(settings.background)
    run_migrations(settings.admin_database_url, MIGRATIONS_DIR, app_role=settings.app_role)
    engine = make_engine(
        url_for_role(settings.admin_database_url, settings.app_role, settings.app_password),
        pool_size=settings.pool_size,
        application_name="memloop-serving-loop" if loop_only else "memloop-serving",
        liveness="socket",  # no round trip per checkout on the request path (services.common.db)
    )
    sessions = sessionmaker(engine, expire_on_commit=False)
    redactor = Redactor(RedactionMode.THOROUGH)  # the worker's coverage, before the transaction opens
    waker = (
        RelayWaker(
            connect_for_notify(engine.url.set(drivername="postgresql").render_as_string(hide_password=False)),
            min_interval=settings.notify_interval_ms / 1000,
        )
        if settings.notify == "coalesce" and settings.learning and not loop_only
        else None
    )
    notify: Notify = "after" if settings.notify == "after" else "commit"
    wake_relays = waker.wake if waker is not None else None

    def unit_of_work(tenant: str) -> ServingUnitOfWork:
        return SqlServingUnitOfWork(sessions, tenant, notify=notify, wake_relays=wake_relays)

    deps = ServingDeps(
        uow_factory=unit_of_work,
        # Short texts repeat (addresses above all): a memo of their redaction, same output (redaction_memo).
        redact=MemoRedact(lambda text: redactor.redact(text).text),
        learning=settings.learning,
        redacted_by=redactor.fingerprint,
    )
    # Agents' HandleRequest stays on the server's threads; the loop's own reads and deletions run on
    # a small pool of their own whose database backends run idle (services/common/db.py). The
    # threads stay normal: an idle thread parked while holding the GIL would stall HandleRequest.
    # In a loop-only process every thread is already idle: the calls run on the server's threads.
    background = (
        None
        if loop_only
        else loop_executor(settings.background, workers=settings.background_workers, name="serving-loop")
    )
    registration = Registration(
        serving_service_pb2_grpc.add_ServingServiceServicer_to_server,
        ServingServicer(deps, background, agents=not loop_only),
        full_service_name(serving_service_pb2, "ServingService"),
    )
    on_stop: list[Callable[[], None]] = [engine.dispose]
    on_start: list[Callable[[], None]] = [lower_group_once_started(settings.background)] if loop_only else []
    if waker is not None:
        on_start.append(waker.start)
        on_stop.insert(0, waker.stop)  # after the server drained: its last wakes are sent
    if background is not None:
        on_stop.insert(0, lambda: background.shutdown(wait=True))
    return App(
        settings.common,
        servicers=[registration],
        on_start=on_start,
        on_stop=on_stop,
        max_workers=settings.max_workers,
    )
