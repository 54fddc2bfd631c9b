"""Erase a deletion's events from the JetStream learning and dead-letter streams.

A learning event carries references, but also its tool outcomes' (redacted) summaries, and a dead
letter carries the original bytes: both are copies a deletion must reach. The streams are scanned
on the tenant's subjects only (`<prefix>.learning.<tenant>`, `<prefix>.dlq.<tenant>`), message by
message (JetStream's "next by subject"), and each matching message is deleted with JetStream's
default secure erase (the stored bytes are overwritten, not just unlinked). The cost is one round
trip per retained message of the tenant; a learning stream is a queue, not an archive, so an
operator bounds it with a max age.

Each call opens its own short-lived connection (the workflow runs on a plain thread), so nothing
here shares the replica bus's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping

import nats
from google.protobuf.message import DecodeError
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from services.common.errors import Unavailable
from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import one_shot_options
from services.memory.deletion.domain.deletion import StreamMessage, message_event_id, message_matches
from services.memory.deletion.service.ports import EventItem, StreamErasure

_MSG_ID = "Nats-Msg-Id"
_EVENT_ID = "Memloop-Event-Id"


class JetStreamEraser:
    def __init__(
        self,
        nats_url: str,
        *,
        prefix: str,
        learning_stream: str,
        timeout_seconds: float = 10.0,
        access: NatsAccess | None = None,
    ) -> None:
        self._url = nats_url
        self._access = access or NatsAccess()
        self._prefix = prefix
        self._learning = learning_stream
        self._timeout = timeout_seconds

    def erase(self, tenant: str, event_ids: frozenset[str], user: str) -> StreamErasure:
        """Erase every message of `event_ids` (and, with `user`, every message of that user)."""
        try:
            return asyncio.run(self._erase(tenant, event_ids, user))
        except (OSError, TimeoutError, nats.errors.Error) as exc:
            raise Unavailable(f"NATS at {self._url}: {type(exc).__name__}") from None

    async def _erase(self, tenant: str, event_ids: frozenset[str], user: str) -> StreamErasure:
        found: dict[str, EventItem]
        client = await connect_nats(
            **one_shot_options(self._url),
            connect_timeout=self._timeout,
            **self._access.connect_options(),
        )
        erased, found = 0, {}
        try:
            js = client.jetstream(timeout=self._timeout)
            streams = (
                (self._learning, f"{self._prefix}.learning.{tenant}"),
                (f"{self._learning}_DLQ", f"{self._prefix}.dlq.{tenant}"),
            )
            for stream, subject in streams:
                async for message in _messages(js, stream, subject):
                    if not message_matches(message, event_ids, user):
                        continue
                    with contextlib.suppress(NotFoundError):  # gone already (a replay moved a dead letter)
                        await js.delete_msg(stream, message.sequence)
                    erased += 1
                    found.setdefault(message.event_id, EventItem(message.event_id, message.user, message.content_ref))
        finally:
            await client.close()
        return StreamErasure(erased, tuple(found.values()))


async def _messages(js: JetStreamContext, stream: str, subject: str) -> AsyncIterator[StreamMessage]:
    """Every message of `subject` in `stream`, oldest first; nothing when the stream does not exist."""
    sequence = 1
    while True:
        try:
            raw = await js.get_msg(stream, seq=sequence, subject=subject, next=True)
        except NotFoundError:
            return
        assert raw.seq is not None
        yield _parse(raw.seq, raw.data or b"", raw.headers or {})
        sequence = raw.seq + 1


def _parse(sequence: int, data: bytes, headers: Mapping[str, str]) -> StreamMessage:
    event = learning_event_pb2.LearningEvent()
    try:
        event.ParseFromString(data)
    except DecodeError:
        event = learning_event_pb2.LearningEvent()
    msg_id = str(headers.get(_EVENT_ID) or headers.get(_MSG_ID) or "")
    return StreamMessage(sequence, message_event_id(msg_id, event.event_id), event.user, event.content_ref)
