"""memory_changed notices stay under NATS's max payload however many ids a change has.

Before, one notice carried every id; at about 29k ids it passed 1 MB and NATS refused it, so
peers never heard of a large forget. Real nats-server, the real adapter.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from services.common.nats_connect import connect_nats
from services.memory.core.adapters.notices import NatsNotices, changes_subject
from tests.helpers import TestInfra, random_ref

pytestmark = pytest.mark.integration


class _Recorder:
    """The bus port NatsNotices publishes to; the test forwards each message to the real server."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []

    def publish(self, subject: str, payload: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.messages.append((subject, payload))


async def test_a_change_of_60k_ids_reaches_subscribers_in_notices_under_the_max_payload(infra: TestInfra) -> None:
    # Given a subscriber on the change subject, and a change of 60,000 memory ids (about 2 MB of JSON)
    prefix = random_ref("notices").replace("-", "_")
    ids = [uuid.uuid4().hex for _ in range(60_000)]
    client = await connect_nats(infra.nats_url)
    received: list[bytes] = []
    got_all = asyncio.Event()

    async def collect(message: Any) -> None:
        received.append(message.data)
        if sum(len(json.loads(p)["memory_ids"]) for p in received) >= len(ids):
            got_all.set()

    try:
        await client.subscribe(changes_subject(prefix), cb=collect)
        await client.flush()
        # When memory announces it, and each notice goes to the real server
        recorder = _Recorder()
        NatsNotices(recorder, prefix=prefix, replica_id="r1").memory_changed("acme", ids, 7)  # type: ignore[arg-type]
        for subject, payload in recorder.messages:
            await client.publish(subject, payload)  # raises MaxPayloadError above the server's limit
        await client.flush()
        await asyncio.wait_for(got_all.wait(), timeout=30)
    finally:
        await client.close()
    # Then every id arrives exactly once, in notices each under the server's max payload
    notices = [json.loads(p) for p in received]
    assert sorted(i for n in notices for i in n["memory_ids"]) == sorted(ids)
    assert all(len(p) < client.max_payload for p in received) and len(received) > 1
    assert {n["change_seq"] for n in notices} == {7}
