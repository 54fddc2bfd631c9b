"""The dead-letter page's adapter: the worker's own `DeadLetterQueue`, narrowed to one tenant.

The dead-letter stream holds every tenant's failures, so the console filters by the tenant the
event itself names (the payload is a `LearningEvent`; a payload that does not parse falls back to
the subject's tenant token). Replay is the same call `memloop dlq replay` makes, so its safety
argument (memory applies an event at most once; the replay message id deduplicates) holds here.
"""

from __future__ import annotations

import datetime

from google.protobuf.message import DecodeError
from nats.aio.client import Client as NatsClient

from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import one_shot_options
from services.console.ports import DeadLetterView
from services.worker.adapters.dead_letters import DeadLetter, DeadLetterQueue
from services.worker.adapters.jetstream import StreamNames


def tenant_of(entry: DeadLetter, names: StreamNames) -> str:
    try:
        event = learning_event_pb2.LearningEvent.FromString(entry.data)
    except DecodeError:
        event = None
    if event is not None and event.tenant:
        return event.tenant
    head = f"{names.prefix}.dlq."
    return entry.subject[len(head) :] if entry.subject.startswith(head) else ""


class NatsDeadLetters:
    """Connects per call: the page is rarely used and a held connection would be one more thing to heal."""

    def __init__(self, nats_url: str, names: StreamNames, access: NatsAccess | None = None) -> None:
        self._url = nats_url
        self._access = access or NatsAccess()
        self._names = names

    async def _entries(self, tenant: str) -> tuple[NatsClient, DeadLetterQueue, list[DeadLetter]]:
        client = await connect_nats(
            **one_shot_options(self._url),
            connect_timeout=5,
            **self._access.connect_options(),
        )
        try:
            queue = DeadLetterQueue(client.jetstream(), self._names)
            entries = [e for e in await queue.list() if tenant_of(e, self._names) == tenant]
        except BaseException:
            await client.close()  # a failed listing must not leave the connection to the loop's teardown
            raise
        return client, queue, entries

    async def list(self, tenant: str) -> list[DeadLetterView]:
        client, _, entries = await self._entries(tenant)
        await client.close()
        now = datetime.datetime.now(datetime.UTC)
        return [
            DeadLetterView(e.sequence, e.event_id, e.reason, e.attempts, e.last_error, e.age_seconds(now))
            for e in entries
        ]

    async def replay(self, tenant: str, sequence: int) -> str:
        """Replay the tenant's dead letter `sequence`; LookupError when the tenant has no such entry."""
        client, queue, entries = await self._entries(tenant)
        try:
            entry = next((e for e in entries if e.sequence == sequence), None)
            if entry is None:
                raise LookupError(f"no dead letter {sequence} for this tenant")
            replayed = await queue.replay(entry)
            return (
                f"replayed {replayed.event_id or '(unparsed)'} as learning stream sequence {replayed.learning_sequence}"
            )
        finally:
            await client.close()
