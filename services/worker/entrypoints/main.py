"""`python -m services.worker.entrypoints.main`: the learning worker process.

Start-up order is what makes "healthy" mean "consuming": connect to NATS (retrying until it
answers), create or update the streams and the durable consumer, build the peers, and only then
start the gRPC health server that reports SERVING (the launcher and the tests wait for it).
SIGTERM stops fetching, lets in-flight events finish within the drain period and exits; anything
unfinished is redelivered to another worker after AckWait.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Awaitable

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import APIError, ServiceUnavailableError

from services.common import telemetry
from services.common.grpc_server import start_server
from services.worker.adapters.dead_letters import DeadLetterPublisher
from services.worker.adapters.grpc_peers import close_peers
from services.worker.adapters.jetstream import ensure_consumer, ensure_streams
from services.worker.adapters.metrics import poll_backlog
from services.worker.bootstrap import WorkerSettings, build_extractor, build_peers, build_redactor
from services.worker.entrypoints.consumer import DeliveryHandler, LearningConsumer

_log = logging.getLogger(__name__)


async def _connect(url: str, stop: asyncio.Event) -> Client | None:
    """Connect, retrying every second until NATS answers or a stop is requested."""

    async def on_error(exc: Exception) -> None:
        _log.warning("nats: %s", type(exc).__name__)

    async def on_disconnect() -> None:
        _log.warning("nats: disconnected")

    async def on_reconnect() -> None:
        _log.info("nats: reconnected")

    while not stop.is_set():
        try:
            return await nats.connect(
                url,
                name="memloop-worker",
                connect_timeout=2,
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                error_cb=on_error,
                disconnected_cb=on_disconnect,
                reconnected_cb=on_reconnect,
            )
        except (nats.errors.Error, OSError, TimeoutError) as exc:
            _log.warning("cannot reach NATS at %s (%s); retrying", url, type(exc).__name__)
            await asyncio.sleep(1.0)
    return None


async def _set_up_consumer(
    js: JetStreamContext, settings: WorkerSettings, stop: asyncio.Event
) -> JetStreamContext.PullSubscription | None:
    """Streams and durable consumer, retried while JetStream is not ready (a server still starting)."""
    while not stop.is_set():
        try:
            await ensure_streams(js, settings.streams)
            return await ensure_consumer(js, settings.streams, settings.consumer)
        except (nats.errors.Error, TimeoutError) as exc:
            if isinstance(exc, APIError) and not isinstance(exc, ServiceUnavailableError):
                raise  # a configuration the server refuses: retrying cannot help, say so and stop
            _log.warning("JetStream setup failed (%s); retrying", type(exc).__name__)
            await asyncio.sleep(1.0)
    return None


async def run_worker(settings: WorkerSettings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    client = await _connect(settings.nats_url, stop)
    if client is None:
        return
    js = client.jetstream()
    subscription = await _set_up_consumer(js, settings, stop)
    if subscription is None:
        await client.close()
        return
    peers = build_peers(settings)
    handler = DeliveryHandler(
        ports=peers.ports,
        redactor=build_redactor(),
        extractor=build_extractor(settings),
        dead_letters=DeadLetterPublisher(js, settings.streams),
        retry=settings.retry,
        heartbeat_interval=max(0.5, settings.consumer.ack_wait / 3),
    )
    consumer = LearningConsumer(subscription, handler.handle, concurrency=settings.concurrency)
    poller = asyncio.create_task(
        poll_backlog(js, settings.streams, settings.consumer.name, settings.metrics_poll_seconds)
    )
    health = start_server(settings.common, [])  # health only; it runs on grpc's own threads
    _log.info(
        "worker consuming %s (consumer %s, concurrency %d, in flight %d)",
        settings.streams.learning_stream,
        settings.consumer.name,
        settings.concurrency,
        settings.consumer.max_ack_pending,
    )
    try:
        await consumer.run(stop)
    finally:
        _log.info("worker draining")
        drain = settings.common.drain_seconds
        _exit_if_stuck(drain + _SHUTDOWN_MARGIN_SECONDS)
        health.stop(0)
        await _bounded("in-flight deliveries", consumer.drain(drain), drain + 1.0)
        poller.cancel()
        await _bounded("backlog poller", asyncio.gather(poller, return_exceptions=True), 2.0)
        await _bounded("peer channels", close_peers(peers.channels), 3.0)
        await _close_nats(client)


# Every shutdown step is bounded; past drain + this margin the process exits regardless.
_SHUTDOWN_MARGIN_SECONDS = 10.0


async def _bounded(what: str, step: Awaitable[object], timeout: float) -> None:
    """Await one shutdown step; a step that fails or overruns is logged and skipped, never fatal."""
    try:
        await asyncio.wait_for(step, timeout)
    except TimeoutError:
        _log.warning("shutdown: %s did not finish within %.1f s; moving on", what, timeout)
    except Exception as exc:
        _log.warning("shutdown: %s failed (%s); moving on", what, type(exc).__name__)


async def _close_nats(client: Client) -> None:
    """Drain when connected (acks in flight get out); close when NATS is gone (drain would refuse)."""
    if client.is_connected:
        await _bounded("NATS drain", client.drain(), 5.0)
    if not client.is_closed:
        await _bounded("NATS close", client.close(), 3.0)


def _exit_if_stuck(after: float) -> None:
    """A backstop for a shutdown step nobody foresaw hanging: unacked events are redelivered anyway."""

    def force() -> None:
        _log.error("shutdown did not finish within %.1f s: exiting", after)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(after, force)
    timer.daemon = True
    timer.start()


def main() -> None:
    settings = WorkerSettings.from_env()
    telemetry.configure(settings.common)
    try:
        asyncio.run(run_worker(settings))
    finally:
        telemetry.shutdown()
        _log.info("worker stopped")


if __name__ == "__main__":
    main()
