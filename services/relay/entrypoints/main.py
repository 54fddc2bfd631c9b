"""`python -m services.relay.entrypoints.main`: publish serving's outbox to JetStream until SIGTERM.

Start-up order is readiness order: database (waits for serving's schema), NATS, the stream; only
then does the tiny gRPC health server report SERVING, so a launcher waiting on health knows the
relay can publish. SIGTERM stops claiming, lets in-flight PubAcks arrive and marks them.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from services.common import telemetry
from services.common.grpc_server import start_server
from services.relay.adapters.jetstream import JetStreamPublisher, StreamSpec, connect_nats, ensure_stream
from services.relay.adapters.metrics import PrometheusRelayMetrics
from services.relay.adapters.pg_outbox import PgOutboxStore
from services.relay.bootstrap import RelaySettings
from services.relay.service.relay import Relay

_log = logging.getLogger("services.relay")


async def run(settings: RelaySettings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    store = await PgOutboxStore.open(settings.conninfo)
    client = await connect_nats(settings.nats_url, name=f"memloop-relay-{settings.config.claimer}")
    timing = settings.config.timing
    publisher = JetStreamPublisher(
        client,
        subject_prefix=settings.subject_prefix,
        stream=settings.stream_name,
        publish_timeout_seconds=timing.publish_timeout_seconds,
        max_in_flight=settings.config.max_in_flight,
    )
    spec = StreamSpec(
        settings.stream_name, settings.subject_prefix, timing.duplicate_window_seconds, settings.stream_replicas
    )
    await ensure_stream(publisher.jetstream, spec)
    health = start_server(settings.common, [], max_workers=2)
    _log.info(
        "relay %s publishing to stream %s (duplicate window %gs, retry horizon %gs)",
        settings.config.claimer,
        settings.stream_name,
        timing.duplicate_window_seconds,
        timing.retry_horizon_seconds,
    )
    try:
        await Relay(store, publisher, PrometheusRelayMetrics(), settings.config).run(stop)
    finally:
        _log.info("relay %s stopping: in-flight PubAcks drained and marked", settings.config.claimer)
        health.stop(1.0)
        await store.close()
        await client.close()
        _log.info("relay %s stopped", settings.config.claimer)


def main() -> None:
    settings = RelaySettings.from_env()
    telemetry.configure(settings.common)
    asyncio.run(run(settings))
    telemetry.shutdown()


if __name__ == "__main__":
    main()
