"""The learning worker process's lifecycle, as the start hook, tasks and stop hook of its `App`.

Start-up order is what makes "healthy" mean "consuming": connect to NATS (retrying until it
answers), create or update the streams and the durable consumer, build the peers; only after the
start hook does `services.common.app.run` start the gRPC health server that reports SERVING (the
launcher and the tests wait for it). SIGTERM stops fetching, lets in-flight events finish within
the drain period and exits; anything unfinished is redelivered to another worker after AckWait.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import APIError, ServiceUnavailableError

from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import nats_servers
from services.common.redaction import Redactor
from services.worker.adapters.dead_letters import DeadLetterPublisher
from services.worker.adapters.grpc_peers import close_peers
from services.worker.adapters.jetstream import ensure_consumer, ensure_streams
from services.worker.adapters.metrics import poll_backlog
from services.worker.adapters.pressure import MetricsPressure, control
from services.worker.domain.extraction import CandidateExtractor
from services.worker.entrypoints.consumer import DeliveryHandler, LearningConsumer
from services.worker.service.backpressure import AimdLimit

if TYPE_CHECKING:  # bootstrap builds this process; importing it at run time would be circular
    from services.worker.bootstrap import Peers, WorkerSettings

_log = logging.getLogger(__name__)


async def _connect(url: str, stop: asyncio.Event, access: NatsAccess) -> Client | None:
    """Connect, retrying every second until NATS answers or a stop is requested."""

    async def on_error(exc: Exception) -> None:
        _log.warning("nats: %s", type(exc).__name__)

    async def on_disconnect() -> None:
        _log.warning("nats: disconnected")

    async def on_reconnect() -> None:
        _log.info("nats: reconnected")

    while not stop.is_set():
        try:
            return await connect_nats(
                nats_servers(url),
                name="memloop-worker",
                connect_timeout=2,
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                error_cb=on_error,
                disconnected_cb=on_disconnect,
                reconnected_cb=on_reconnect,
                **access.connect_options(),
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


class WorkerProcess:
    """The worker's connections and consumer, opened inside the process's event loop (grpc.aio and
    nats bind to it) and closed by the stop hook, whatever point start-up reached."""

    def __init__(
        self,
        settings: WorkerSettings,
        stopping: asyncio.Event,
        *,
        peers: Callable[[], Peers],
        redactor: Redactor,
        extractor: CandidateExtractor,
    ) -> None:
        self._settings, self._stopping = settings, stopping
        self._build_peers, self._redactor, self._extractor = peers, redactor, extractor
        self._client: Client | None = None
        self._peers: Peers | None = None
        self._consumer: LearningConsumer | None = None
        self._js: JetStreamContext | None = None
        self._limit = AimdLimit(settings.concurrency, limits=settings.pressure.limits)

    async def open(self) -> None:
        """Connect and set up the consumer; returns early (the process then stops) on SIGTERM."""
        settings, stop = self._settings, self._stopping
        self._client = await _connect(settings.nats_url, stop, settings.common.nats)
        if self._client is None:
            return
        self._js = self._client.jetstream()
        subscription = await _set_up_consumer(self._js, settings, stop)
        if subscription is None:
            return
        self._peers = self._build_peers()  # grpc.aio channels bind to the running loop
        handler = DeliveryHandler(
            ports=self._peers.ports,
            redactor=self._redactor,
            extractor=self._extractor,
            dead_letters=DeadLetterPublisher(self._js, settings.streams),
            retry=settings.retry,
            heartbeat_interval=max(0.5, settings.consumer.ack_wait / 3),
        )
        self._consumer = LearningConsumer(
            subscription,
            handler.handle_batch,
            concurrency=self._limit,
            batch_size=settings.batch_size,
            batch_wait=settings.batch_wait_seconds,
        )
        _log.info(
            "worker consuming %s (consumer %s, concurrency %d, batches of %d or %.0f ms, in flight %d)",
            settings.streams.learning_stream,
            settings.consumer.name,
            settings.concurrency,
            settings.batch_size,
            settings.batch_wait_seconds * 1000,
            settings.consumer.max_ack_pending,
        )

    async def consume(self) -> None:
        """Handle deliveries until stopped, then drain the in-flight ones within the drain period."""
        assert self._consumer is not None, "the start hook builds the consumer before tasks run"
        try:
            await self._consumer.run(self._stopping)
        finally:
            _log.info("worker draining")
            drain = self._settings.common.drain_seconds
            _exit_if_stuck(drain + _SHUTDOWN_MARGIN_SECONDS)
            await _bounded("in-flight deliveries", self._consumer.drain(drain), drain + 1.0)
            await _bounded("pull subscription", self._consumer.release(), 2.0)

    async def follow_pressure(self) -> None:
        """Lower the in-flight limit while serving is slow or its outbox ages (issue 15); off
        (fixed concurrency) when no metrics endpoint is configured."""
        pressure = self._settings.pressure
        if pressure.urls:
            await control(self._limit, MetricsPressure(pressure.urls), pressure.interval_seconds, self._stopping)

    async def report_backlog(self) -> None:
        """Poll the consumer's backlog into metrics until stopped."""
        assert self._js is not None
        settings = self._settings
        poller = asyncio.create_task(
            poll_backlog(self._js, settings.streams, settings.consumer.name, settings.metrics_poll_seconds)
        )
        await self._stopping.wait()
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)

    async def close(self) -> None:
        """Every step bounded; NATS is drained when connected and closed when it is gone."""
        if self._peers is not None:
            await _bounded("peer channels", close_peers(self._peers.channels), 3.0)
        client = self._client
        if client is not None:
            if client.is_connected:
                await _bounded("NATS drain", client.drain(), 5.0)
            if not client.is_closed:
                await _bounded("NATS close", client.close(), 3.0)
        _log.info("worker stopped")


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


def _exit_if_stuck(after: float) -> None:
    """A backstop for a shutdown step nobody foresaw hanging: unacked events are redelivered anyway."""

    def force() -> None:
        _log.error("shutdown did not finish within %.1f s: exiting", after)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(after, force)
    timer.daemon = True
    timer.start()
