"""The console's dead-letter adapter on real NATS JetStream: each tenant sees and replays only its
own dead letters, and a replay puts the event back on the learning stream and off the DLQ."""

from __future__ import annotations

import nats
import pytest

from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.nats_connect import connect_nats
from services.console.adapters.dead_letters import NatsDeadLetters
from services.worker.adapters import dead_letters as dlq
from services.worker.adapters.jetstream import StreamNames, ensure_streams
from tests.helpers import TestInfra, random_ref

pytestmark = pytest.mark.integration


async def _file_dead_letter(js: nats.js.JetStreamContext, names: StreamNames, tenant: str) -> str:
    """A dead letter as the worker files one: the event's bytes plus the reason headers."""
    event_id = random_ref("evt")
    event = learning_event_pb2.LearningEvent(event_id=event_id, tenant=tenant, user="alice")
    headers = {
        dlq.REASON: "memory_unavailable",
        dlq.ATTEMPTS: "5",
        dlq.LAST_ERROR: "UNAVAILABLE",
        dlq.EVENT_ID: event_id,
        dlq.ORIGINAL_SUBJECT: names.learning_subject(tenant),
        dlq.MSG_ID: f"{event_id}:dlq:1",
    }
    await js.publish(names.dlq_subject(tenant), event.SerializeToString(), headers=headers, stream=names.dlq_stream)
    return event_id


async def test_each_tenant_lists_and_replays_only_its_own_dead_letters(infra: TestInfra, nats_prefix: str) -> None:
    # Given dead letters of two tenants in one dead-letter stream
    names = StreamNames(prefix=nats_prefix, learning_stream=f"{nats_prefix}_LEARNING")
    client = await connect_nats(infra.nats_url)
    try:
        js = client.jetstream()
        await ensure_streams(js, names)
        acme_event = await _file_dead_letter(js, names, "acme")
        globex_event = await _file_dead_letter(js, names, "globex")
        console = NatsDeadLetters(infra.nats_url, names)
        # When each tenant lists
        acme, globex = await console.list("acme"), await console.list("globex")
        # Then each sees only its own, with reason and attempts
        assert [(e.event_id, e.reason, e.attempts) for e in acme] == [(acme_event, "memory_unavailable", 5)]
        assert [e.event_id for e in globex] == [globex_event]
        # When acme tries to replay globex's entry, then it is not found and stays
        with pytest.raises(LookupError):
            await console.replay("acme", globex[0].sequence)
        assert [e.event_id for e in await console.list("globex")] == [globex_event]
        # When acme replays its own
        await console.replay("acme", acme[0].sequence)
        # Then it left the DLQ and is back on the learning stream
        assert await console.list("acme") == []
        replayed = await js.get_last_msg(names.learning_stream, names.learning_subject("acme"))
        assert replayed.data is not None
        assert learning_event_pb2.LearningEvent.FromString(replayed.data).event_id == acme_event
    finally:
        await client.close()
