"""JetStream plumbing of the learning path: names, idempotent setup, backlog figures.

Setup is safe to run by every worker at every start and concurrently with the relay: a stream
that exists is left as it is (the relay may own its limits), the dead-letter stream and the
durable consumer are created or updated to this worker's configuration. The consumer's
server-side MaxDeliver is unlimited on purpose: giving up is the worker's decision (attempts AND
age, see `services.worker.service.retry`); a server-side limit would strand messages unacked
instead of dead-lettering them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import BadRequestError, NotFoundError

_log = logging.getLogger(__name__)

LEARNING_TOKEN = "learning"
DLQ_TOKEN = "dlq"
UNKNOWN_TENANT_TOKEN = "_unknown"


@dataclass(frozen=True)
class StreamNames:
    """Stream and subject names derived from the subject prefix and learning stream (CONVENTIONS.md)."""

    prefix: str
    learning_stream: str
    replicas: int = 1  # of both streams, when this worker creates them (MEMLOOP_STREAM_REPLICAS)

    @property
    def learning_filter(self) -> str:
        return f"{self.prefix}.{LEARNING_TOKEN}.>"

    @property
    def dlq_stream(self) -> str:
        return f"{self.learning_stream}_DLQ"

    @property
    def dlq_filter(self) -> str:
        return f"{self.prefix}.{DLQ_TOKEN}.>"

    def learning_subject(self, tenant_token: str) -> str:
        return f"{self.prefix}.{LEARNING_TOKEN}.{tenant_token}"

    def dlq_subject(self, tenant_token: str) -> str:
        return f"{self.prefix}.{DLQ_TOKEN}.{tenant_token}"

    def tenant_token(self, learning_subject: str) -> str:
        """The subject's tenant part (`<prefix>.learning.<tenant>`), usable even when the payload is not."""
        head = f"{self.prefix}.{LEARNING_TOKEN}."
        rest = learning_subject[len(head) :] if learning_subject.startswith(head) else ""
        return rest or UNKNOWN_TENANT_TOKEN


@dataclass(frozen=True)
class ConsumerSettings:
    """The durable pull consumer's server-side configuration."""

    name: str
    ack_wait: float
    max_ack_pending: int


async def ensure_streams(js: JetStreamContext, names: StreamNames) -> None:
    """Create the learning stream if nobody did yet, and create or update the dead-letter stream."""
    await _ensure_stream(
        js,
        js_api.StreamConfig(
            name=names.learning_stream,
            subjects=[names.learning_filter],
            storage=js_api.StorageType.FILE,
            retention=js_api.RetentionPolicy.LIMITS,
            duplicate_window=120.0,
            num_replicas=names.replicas,
        ),
        update=False,
    )
    # Dead letters wait for an operator: no age or count limit, never discarded.
    await _ensure_stream(
        js,
        js_api.StreamConfig(
            name=names.dlq_stream,
            subjects=[names.dlq_filter],
            storage=js_api.StorageType.FILE,
            retention=js_api.RetentionPolicy.LIMITS,
            duplicate_window=120.0,
            num_replicas=names.replicas,
        ),
        update=True,
    )


async def _ensure_stream(
    js: JetStreamContext, config: js_api.StreamConfig, *, update: bool, attempts: int = 8, pause: float = 0.25
) -> None:
    """Create the stream, or (with `update`) bring an existing one to `config`; safe against a racing creator.

    Another worker or a relay may be creating the same stream at this moment. On a replicated
    stream the server then refuses our create ("already in use with a different configuration")
    while the other creation is still forming its group, so a read right after can still say
    "not found" or time out. Both are a stream on its way, not a refusal: read again after a pause.
    """
    assert config.name is not None
    for attempt in range(attempts):
        try:
            await js.stream_info(config.name)
        except NotFoundError:
            try:
                await js.add_stream(config)
                _log.info("created stream %s", config.name)
                return
            except BadRequestError:
                await asyncio.sleep(pause * (attempt + 1))  # someone else's creation is under way
                continue
        if update:
            await js.update_stream(config)
        return
    raise RuntimeError(f"stream {config.name} was neither created nor readable after {attempts} attempts")


async def ensure_consumer(
    js: JetStreamContext, names: StreamNames, settings: ConsumerSettings
) -> JetStreamContext.PullSubscription:
    """Create or update the durable pull consumer (idempotent) and bind a pull subscription to it."""
    config = js_api.ConsumerConfig(
        name=settings.name,
        durable_name=settings.name,
        deliver_policy=js_api.DeliverPolicy.ALL,
        ack_policy=js_api.AckPolicy.EXPLICIT,
        ack_wait=settings.ack_wait,
        max_deliver=-1,
        max_ack_pending=settings.max_ack_pending,
        filter_subject=names.learning_filter,
        replay_policy=js_api.ReplayPolicy.INSTANT,
    )
    await js.add_consumer(names.learning_stream, config)
    return await js.pull_subscribe_bind(
        durable=settings.name,
        stream=names.learning_stream,
        pending_msgs_limit=max(1024, settings.max_ack_pending * 4),
    )


@dataclass(frozen=True)
class Backlog:
    """What the learning consumer still has to do, and how long its oldest item has waited."""

    pending: int
    ack_pending: int
    oldest_age_seconds: float
    dlq_depth: int


async def read_backlog(js: JetStreamContext, names: StreamNames, consumer: str) -> Backlog:
    """Consumer pending (undelivered + unacked), oldest unacked message's age, dead-letter depth.

    The oldest waiting message is the first stream message after the consumer's ack floor: every
    message before it is acknowledged, so its store time is the age of the queue.
    """
    info = await js.consumer_info(names.learning_stream, consumer)
    pending, ack_pending = info.num_pending or 0, info.num_ack_pending or 0
    oldest_age = 0.0
    if pending + ack_pending > 0:
        floor = info.ack_floor.stream_seq if info.ack_floor is not None else 0
        with contextlib.suppress(NotFoundError):
            oldest = await js.get_msg(names.learning_stream, seq=floor + 1, subject=names.learning_filter, next=True)
            if oldest.time is not None:
                oldest_age = max(0.0, (datetime.datetime.now(datetime.UTC) - oldest.time).total_seconds())
    dlq_depth = 0
    with contextlib.suppress(NotFoundError):
        dlq_depth = (await js.stream_info(names.dlq_stream)).state.messages
    return Backlog(pending=pending, ack_pending=ack_pending, oldest_age_seconds=oldest_age, dlq_depth=dlq_depth)
