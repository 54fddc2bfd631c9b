"""One composition-root shape for every service process: `bootstrap.build(settings) -> App`, then `run`.

A service's bootstrap wires its adapters and use cases and returns an `App`: the gRPC servicers it
serves, the background tasks that run beside them, and the start and stop hooks. `run(app)` is the
one process main loop, so start-up order, readiness and shutdown mean the same in every service:

1. start hooks run in order (migrations done, NATS joined, streams ensured...). A hook may find a
   stop already requested (SIGTERM while connecting); the process then skips serving and stops.
2. the gRPC server starts with health and reflection; health reports SERVING only now, so a
   launcher waiting on health knows the start hooks have finished (relay and worker serve health
   only, no servicer);
3. background tasks run until SIGTERM or SIGINT sets `app.stopping` (a task that fails stops the
   process too, and its error is re-raised once everything is closed);
4. the server stops taking calls and lets in-flight ones finish within the drain period, the tasks
   finish their own drain, and the stop hooks run in order.

Hooks may be plain functions (run on a worker thread, so a slow one does not block the signal
handlers; they must not touch `App.stopping`, an asyncio event) or coroutine functions (run on the
process's event loop, where the async services keep their NATS clients).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.common import telemetry
from services.common.grpc_server import Registration, start_server
from services.common.settings import CommonSettings

_log = logging.getLogger(__name__)

Hook = Callable[[], None] | Callable[[], Awaitable[None]]
"""A start or stop hook: a plain function or a coroutine function, called without arguments."""

Task = Callable[[], Coroutine[Any, Any, None]]
"""A background task: runs while the process serves and returns once `App.stopping` is set."""


@dataclass
class App:
    """A wired service process: what it serves, what runs beside it, how it starts and stops."""

    settings: CommonSettings
    servicers: Sequence[Registration] = ()
    tasks: Sequence[Task] = ()
    on_start: Sequence[Hook] = ()
    on_stop: Sequence[Hook] = ()
    max_workers: int = 16
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by SIGTERM/SIGINT (or a failed task); tasks and retrying start hooks watch it."""


def run(app: App) -> None:
    """The main of every service process: configure telemetry, serve until signalled, shut down."""
    telemetry.configure(app.settings)
    try:
        asyncio.run(_serve(app))
    finally:
        telemetry.shutdown()
        _log.info("%s stopped", app.settings.service_name)


async def _serve(app: App) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, _request_stop, app, signum)
    try:
        for hook in app.on_start:
            await _call(hook)
            if app.stopping.is_set():
                return
        server = start_server(app.settings, app.servicers, max_workers=app.max_workers)
        tasks = [asyncio.create_task(task()) for task in app.tasks]
        failure = await _until_stopped(app, tasks)
        # Health goes NOT_SERVING and in-flight calls drain while the tasks finish their own drain.
        drained = asyncio.to_thread(server.stop, app.settings.drain_seconds)
        results = await asyncio.gather(drained, *tasks, return_exceptions=True)
        failure = failure or next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            raise failure
    finally:
        for hook in app.on_stop:  # each runs even if an earlier one (or the start-up) failed
            try:
                await _call(hook)
            except Exception:
                _log.exception("%s: a stop hook failed; running the rest", app.settings.service_name)


async def _until_stopped(app: App, tasks: list[asyncio.Task[None]]) -> BaseException | None:
    """Wait for a stop request; a task that fails first requests it, and its error is returned."""
    stop = asyncio.create_task(app.stopping.wait())
    pending: set[asyncio.Task[Any]] = {*tasks, stop}
    failure: BaseException | None = None
    while not stop.done():
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for finished in done:
            if finished is not stop and not finished.cancelled() and finished.exception() is not None:
                failure = failure or finished.exception()
                app.stopping.set()  # one failed task stops the process: it cannot serve half-wired
    return failure


def _request_stop(app: App, signum: int) -> None:
    _log.info("%s received signal %d: draining", app.settings.service_name, signum)
    app.stopping.set()


async def _call(hook: Hook) -> None:
    if inspect.iscoroutinefunction(hook):
        await hook()
    else:
        await asyncio.to_thread(hook)
