"""How one JetStream delivery is settled: ack after memory, nak with delay, dead letter, heartbeats.

Real `nats.aio.msg.Msg` objects carry JetStream ack subjects; a recording client stands in for the
connection, so what the handler sends back to JetStream (+ACK, -NAK {delay}, +TERM, +WPI) is
observed exactly as the server would receive it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nats.aio.msg import Msg

from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.redaction import RedactionMode, Redactor
from services.common.vocabulary import Candidate, Decision
from services.policy.domain import rules
from services.worker.adapters.in_memory import InMemoryContentReader, InMemoryMemory, InProcessPolicyGate
from services.worker.domain.extraction import RuleBasedExtractor
from services.worker.entrypoints.consumer import DeliveryHandler
from services.worker.service.model import ConflictRecord, EmailView, PermanentError, TransientError
from services.worker.service.process_event import LearningPorts
from services.worker.service.retry import RetryPolicy

PHONE = "+1 415 555 0134"


@dataclass
class RecordingClient:
    """Stands in for the NATS connection: records what a Msg publishes to its ack subject."""

    sent: list[bytes] = field(default_factory=list)

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "", headers: Any = None) -> None:
        self.sent.append(payload)

    def verbs(self) -> list[str]:
        return [(p.split(b" ", 1)[0] or b"+ACK").decode() for p in self.sent]


@dataclass
class RecordingDeadLetters:
    filed: list[dict[str, Any]] = field(default_factory=list)

    async def dead_letter(self, msg: Msg, *, event_id: str, reason: str, attempts: int, last_error: str) -> None:
        self.filed.append({"event_id": event_id, "reason": reason, "attempts": attempts, "last_error": last_error})
        await msg.term()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _decide(candidate: Candidate, conflicts: Sequence[ConflictRecord]) -> Decision:
    return rules.evaluate(candidate, [rules.Conflict(c.memory_id, c.intent_key, c.text, c.type) for c in conflicts])


@dataclass
class Rig:
    content: InMemoryContentReader
    memory: InMemoryMemory
    dead_letters: RecordingDeadLetters
    clock: Clock
    handler: DeliveryHandler


def _rig(*, heartbeat: float = 10.0, content: InMemoryContentReader | None = None) -> Rig:
    content = content or InMemoryContentReader()
    memory = InMemoryMemory()
    dead_letters = RecordingDeadLetters()
    clock = Clock()
    handler = DeliveryHandler(
        ports=LearningPorts(content=content, conflicts=memory, policy=InProcessPolicyGate(_decide), memory=memory),
        redactor=Redactor(RedactionMode.THOROUGH),
        extractor=RuleBasedExtractor(),
        dead_letters=dead_letters,
        retry=RetryPolicy(max_deliver=3, min_dead_letter_age=30.0, backoff_initial=0.5, backoff_max=4.0),
        heartbeat_interval=heartbeat,
        clock=clock,
    )
    return Rig(content, memory, dead_letters, clock, handler)


def _event_bytes(rig: Rig, event_id: str) -> bytes:
    rig.content.put(
        "acme",
        f"ref-{event_id}",
        EmailView("alice", "bob.tan@partner.example", "alice@acme.example", "Sync", f"Call me on {PHONE}.", False),
    )
    event = learning_event_pb2.LearningEvent(
        event_id=event_id,
        trace_id="cd" * 16,
        tenant="acme",
        user="alice",
        content_ref=f"ref-{event_id}",
        tool_outcomes=[
            learning_event_pb2.ToolOutcome(tool="calendar.create_event", status="ok", summary="Sync with Bob, Tue")
        ],
    )
    return event.SerializeToString()


def _delivery(client: RecordingClient, data: bytes, *, sequence: int, delivered: int) -> Msg:
    reply = f"$JS.ACK.LEARN.worker.{delivered}.{sequence}.{sequence}.1700000000000000000.0"
    return Msg(_client=client, subject="memloop.learning.acme", reply=reply, data=data)  # type: ignore[arg-type]


async def test_a_processed_event_is_acked_only_after_memory_applied_it() -> None:
    # Given a well-formed event
    rig, client = _rig(), RecordingClient()
    msg = _delivery(client, _event_bytes(rig, "evt-ok"), sequence=1, delivered=1)

    # When it is delivered
    await rig.handler.handle(msg)

    # Then memory holds its decisions and the only thing sent back is one ack
    assert ("acme", "evt-ok") in rig.memory.applied
    assert client.verbs() == ["+ACK"]


async def test_a_malformed_event_is_dead_lettered_at_once_and_the_next_event_is_still_processed() -> None:
    # Given a garbage payload followed by a good event
    rig, client = _rig(), RecordingClient()
    bad = _delivery(client, b"\x08\x96\x01 definitely not a LearningEvent \xff", sequence=1, delivered=1)
    good = _delivery(client, _event_bytes(rig, "evt-after-bad"), sequence=2, delivered=1)

    # When both are delivered
    await rig.handler.handle(bad)
    await rig.handler.handle(good)

    # Then the first is dead-lettered (terminated, not retried) and the second is processed
    assert rig.dead_letters.filed == [
        {
            "event_id": "",
            "reason": "MALFORMED_EVENT",
            "attempts": 1,
            "last_error": rig.dead_letters.filed[0]["last_error"],
        }
    ]
    assert client.verbs() == ["+TERM", "+ACK"]
    assert ("acme", "evt-after-bad") in rig.memory.applied


async def test_an_outage_shorter_than_the_dead_letter_age_naks_with_growing_delays_and_dead_letters_nothing() -> None:
    # Given memory down for more deliveries than max_deliver, but for less time than the age
    rig, client = _rig(), RecordingClient()
    data = _event_bytes(rig, "evt-short-outage")
    down = TransientError("MEMORY_UNAVAILABLE", "status=UNAVAILABLE", dependency="memory")
    rig.memory.fail_next(down, down, down, down, down)

    # When it is delivered five times within twenty seconds, then once more after memory is back
    for delivered in range(1, 6):
        await rig.handler.handle(_delivery(client, data, sequence=7, delivered=delivered))
        rig.clock.now += 4.0
    await rig.handler.handle(_delivery(client, data, sequence=7, delivered=6))

    # Then every failure was a delayed nak, nothing was dead-lettered, and the event got applied
    assert client.verbs() == ["-NAK"] * 5 + ["+ACK"]
    delays = [json.loads(p.split(b" ", 1)[1])["delay"] for p in client.sent[:5]]
    assert all(delay > 0 for delay in delays)
    assert rig.dead_letters.filed == []
    assert ("acme", "evt-short-outage") in rig.memory.applied


async def test_an_outage_past_attempts_and_age_dead_letters_with_reason_and_no_content() -> None:
    # Given memory down for good
    rig, client = _rig(), RecordingClient()
    data = _event_bytes(rig, "evt-long-outage")
    rig.memory.fail_next(*[TransientError("MEMORY_UNAVAILABLE", "status=UNAVAILABLE", dependency="memory")] * 3)

    # When the third delivery comes more than the dead-letter age after the first
    for delivered in (1, 2):
        await rig.handler.handle(_delivery(client, data, sequence=9, delivered=delivered))
        rig.clock.now += 20.0
    await rig.handler.handle(_delivery(client, data, sequence=9, delivered=3))

    # Then it is dead-lettered as retries exhausted, naming the dependency and never the email
    assert client.verbs() == ["-NAK", "-NAK", "+TERM"]
    (filed,) = rig.dead_letters.filed
    assert (filed["event_id"], filed["reason"], filed["attempts"]) == ("evt-long-outage", "RETRIES_EXHAUSTED", 3)
    assert filed["last_error"] == "memory: MEMORY_UNAVAILABLE (status=UNAVAILABLE)"
    assert "415" not in filed["last_error"]


async def test_a_long_event_sends_in_progress_heartbeats_before_its_ack() -> None:
    # Given serving answering slowly
    class SlowContent(InMemoryContentReader):
        async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
            await asyncio.sleep(0.35)
            return await super().read_many(tenant, content_refs)

    rig, client = _rig(heartbeat=0.1, content=SlowContent()), RecordingClient()
    msg = _delivery(client, _event_bytes(rig, "evt-slow"), sequence=3, delivered=1)

    # When it is delivered
    await rig.handler.handle(msg)

    # Then the handler told JetStream it was still working, then acked once
    verbs = client.verbs()
    assert verbs[-1] == "+ACK" and verbs.count("+ACK") == 1
    assert verbs.count("+WPI") >= 2
