"""A batch of deliveries: one call per peer for the batch, and every message settled by its own outcome.

Real `nats.aio.msg.Msg` objects carry JetStream ack subjects; a recording client stands in for the
connection, so what each message sends back (+ACK, -NAK {delay}, +TERM, +WPI) is observed per
message exactly as the server would receive it. The peers are the in-memory fakes, which count
their calls (a batch call counts once).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from nats.aio.msg import Msg

from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.redaction import RedactionMode, Redactor
from services.common.vocabulary import Candidate, Decision
from services.policy.domain import rules
from services.worker.adapters.in_memory import InMemoryContentReader, InMemoryMemory, InProcessPolicyGate
from services.worker.domain.extraction import RuleBasedExtractor
from services.worker.entrypoints.consumer import DeliveryHandler, LearningConsumer
from services.worker.service.model import ConflictRecord, EmailView, PermanentError, TransientError
from services.worker.service.process_event import LearningPorts
from services.worker.service.retry import RetryPolicy

UNAVAILABLE = "status=UNAVAILABLE"
BOB = "bob.tan@partner.example"


class Acks:
    """Stands in for the NATS connection: records what each message publishes to its own ack subject."""

    def __init__(self) -> None:
        self.sent: dict[str, list[bytes]] = {}

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "", headers: Any = None) -> None:
        self.sent.setdefault(subject, []).append(payload)

    def verbs(self, msg: Msg) -> list[str]:
        return [(p.split(b" ", 1)[0] or b"+ACK").decode() for p in self.sent.get(msg.reply, [])]


@dataclass
class DeadLetters:
    filed: dict[str, str] = field(default_factory=dict)

    async def dead_letter(self, msg: Msg, *, event_id: str, reason: str, attempts: int, last_error: str) -> None:
        self.filed[event_id] = reason
        await msg.term()


def _decide(candidate: Candidate, conflicts: Sequence[ConflictRecord]) -> Decision:
    return rules.evaluate(candidate, [rules.Conflict(c.memory_id, c.intent_key, c.text, c.type) for c in conflicts])


@dataclass
class Rig:
    content: InMemoryContentReader
    memory: InMemoryMemory
    policy: InProcessPolicyGate
    dead_letters: DeadLetters
    handler: DeliveryHandler
    acks: Acks = field(default_factory=Acks)
    sequence: int = 0

    def event(
        self, event_id: str, *, tenant: str = "acme", user: str = "alice", stored: bool = True, age: float = 0.0
    ) -> Msg:
        """A delivery of a well-formed event whose mail has a phone number and a scheduling outcome."""
        ref = f"ref-{event_id}"
        if stored:
            body = "Call me on +1 415 555 0134."
            self.content.put(tenant, ref, EmailView(user, BOB, "alice@acme.example", "Sync", body, False))
        payload = learning_event_pb2.LearningEvent(
            event_id=event_id,
            trace_id="cd" * 16,
            tenant=tenant,
            user=user,
            content_ref=ref,
            tool_outcomes=[learning_event_pb2.ToolOutcome(tool="calendar.create_event", status="ok", summary="Sync")],
        ).SerializeToString()
        return self.raw(payload, age=age)

    def raw(self, data: bytes, *, delivered: int = 1, age: float = 0.0) -> Msg:
        """A delivery of `data`, stored in the stream `age` seconds ago (its JetStream timestamp)."""
        self.sequence += 1
        stored_ns = time.time_ns() - int(age * 1e9)
        reply = f"$JS.ACK.LEARN.worker.{delivered}.{self.sequence}.{self.sequence}.{stored_ns}.0"
        return Msg(_client=self.acks, subject="memloop.learning.acme", reply=reply, data=data)  # type: ignore[arg-type]


def _rig(content: InMemoryContentReader | None = None, memory: InMemoryMemory | None = None) -> Rig:
    content, memory = content or InMemoryContentReader(), memory or InMemoryMemory()
    policy, dead_letters = InProcessPolicyGate(_decide), DeadLetters()
    handler = DeliveryHandler(
        ports=LearningPorts(content=content, conflicts=memory, policy=policy, memory=memory),
        redactor=Redactor(RedactionMode.THOROUGH),
        extractor=RuleBasedExtractor(),
        dead_letters=dead_letters,
        retry=RetryPolicy(max_deliver=3, min_dead_letter_age=30.0, backoff_initial=0.5, backoff_max=4.0),
        heartbeat_interval=10.0,
    )
    return Rig(content, memory, policy, dead_letters, handler)


async def test_a_batch_looks_up_reads_and_asks_policy_once_and_applies_and_acks_each_event() -> None:
    # Given five events of one tenant, two users
    rig = _rig()
    msgs = [rig.event(f"evt-{i}", user="alice" if i % 2 else "carol") for i in range(5)]

    # When they are handled as one batch
    await rig.handler.handle_batch(msgs)

    # Then memory was asked once whether they were processed, serving read once, policy asked once,
    # conflicts looked up once for both users, all five applied by one batch apply, and each acked once
    assert (rig.memory.lookups, rig.content.batch_reads, rig.content.reads, rig.policy.calls) == (1, 1, 0, 1)
    assert rig.memory.find_calls == 1
    assert (rig.memory.apply_calls, rig.memory.batch_apply_calls) == (1, 1)
    assert sorted(event_id for _, event_id in rig.memory.applied) == [f"evt-{i}" for i in range(5)]
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"]] * 5


async def test_two_tenants_in_one_batch_get_one_call_each_and_decisions_for_their_own_tenant() -> None:
    # Given events of two tenants in one batch
    rig = _rig()
    msgs = [rig.event("evt-a1", tenant="acme"), rig.event("evt-b1", tenant="beta"), rig.event("evt-a2", tenant="acme")]

    # When they are handled
    await rig.handler.handle_batch(msgs)

    # Then each tenant had its own lookup, read and policy call, and every event is applied under its tenant
    assert (rig.memory.lookups, rig.content.batch_reads, rig.policy.calls) == (2, 2, 2)
    assert set(rig.memory.applied) == {("acme", "evt-a1"), ("beta", "evt-b1"), ("acme", "evt-a2")}
    assert all(rig.memory.applied[key].tenant == key[0] for key in rig.memory.applied)
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"]] * 3


async def test_a_forgotten_content_dead_letters_only_its_own_event() -> None:
    # Given a batch in which one event's content no longer exists (forgotten)
    rig = _rig()
    msgs = [rig.event("evt-1"), rig.event("evt-gone", stored=False), rig.event("evt-3")]

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then that event alone is dead-lettered as CONTENT_NOT_FOUND; the others are applied and acked
    assert rig.dead_letters.filed == {"evt-gone": "CONTENT_NOT_FOUND"}
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+TERM"], ["+ACK"]]
    assert set(rig.memory.applied) == {("acme", "evt-1"), ("acme", "evt-3")}


async def test_a_failed_commit_naks_only_its_own_event_and_the_others_are_acked_after_theirs() -> None:
    # Given memory failing the commit of one event of the batch
    rig = _rig()
    msgs = [rig.event(f"evt-{i}") for i in range(4)]
    rig.memory.fail_apply_of("evt-2", TransientError("MEMORY_UNAVAILABLE", UNAVAILABLE, dependency="memory"))

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then that event is negatively acknowledged (redelivered later), never acked; the rest are acked
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+ACK"], ["-NAK"], ["+ACK"]]
    assert ("acme", "evt-2") not in rig.memory.applied
    assert rig.dead_letters.filed == {}


async def test_a_malformed_message_is_dead_lettered_and_the_rest_of_its_batch_is_processed() -> None:
    # Given a garbage payload between two good events
    rig = _rig()
    msgs = [rig.event("evt-1"), rig.raw(b"\x08\x96\x01 not a LearningEvent \xff"), rig.event("evt-3")]

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then the garbage is dead-lettered at once and both events are applied and acked
    assert rig.dead_letters.filed == {"": "MALFORMED_EVENT"}
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+TERM"], ["+ACK"]]


async def test_redelivered_processed_events_are_acked_without_work_beside_new_ones() -> None:
    # Given an event memory has already applied, redelivered in a batch with a new one
    rig = _rig()
    await rig.handler.handle_batch([rig.event("evt-old")])
    applies = rig.memory.apply_calls
    msgs = [rig.event("evt-old"), rig.event("evt-new")]

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then the old one is acked without another apply; only the new one is applied
    assert rig.memory.apply_calls == applies + 1
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+ACK"]]


@pytest.mark.parametrize("peer", ["lookup", "content", "conflicts", "policy"])
async def test_a_shared_call_failing_transiently_naks_every_event_that_needed_it_and_acks_duplicates(
    peer: str,
) -> None:
    # Given a batch with one already-processed event and three new ones, and one peer down for one call
    rig = _rig()
    await rig.handler.handle_batch([rig.event("evt-done")])
    msgs = [rig.event("evt-done"), rig.event("evt-1"), rig.event("evt-2"), rig.event("evt-3")]
    down = TransientError(f"{peer.upper()}_UNAVAILABLE", UNAVAILABLE, dependency=peer)
    {
        "lookup": rig.memory.fail_next,
        "content": rig.content.fail_next,
        "conflicts": rig.memory.fail_next_find,
        "policy": rig.policy.fail_next,
    }[peer](down)

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then no new event was applied; each was naked on its own to be retried; nothing was dead-lettered.
    # The duplicate is acked, except when the lookup that tells it is a duplicate is what failed.
    new_verbs = [rig.acks.verbs(m)[-1] for m in msgs[1:]]
    assert new_verbs == ["-NAK"] * 3
    assert rig.acks.verbs(msgs[0]) == (["-NAK"] if peer == "lookup" else ["+ACK"])
    assert set(rig.memory.applied) == {("acme", "evt-done")}
    assert rig.dead_letters.filed == {}


async def test_a_batch_refused_as_a_whole_falls_back_to_one_event_at_a_time_and_only_the_culprit_fails() -> None:
    # Given serving refusing any batch read that names an over-long reference (as its edge validation
    # does), and one event of the batch carrying such a reference
    class Strict(InMemoryContentReader):
        async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
            self.batch_reads += 1
            if any(len(ref) > 256 for ref in content_refs):
                raise PermanentError("SERVING_INVALID_ARGUMENT", "fields=content_refs[1]", dependency="serving")
            return await super().read_many(tenant, content_refs)

        async def read(self, tenant: str, content_ref: str) -> EmailView:
            if len(content_ref) > 256:
                self.reads += 1
                raise PermanentError("SERVING_INVALID_ARGUMENT", "fields=content_ref", dependency="serving")
            return await super().read(tenant, content_ref)

    rig = _rig(Strict())
    long_id = "evt-" + "x" * 300
    msgs = [rig.event("evt-1"), rig.event(long_id), rig.event("evt-3")]

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then the batch call was refused, each event was read alone, and only the culprit is dead-lettered
    assert rig.content.batch_reads == 1 and rig.content.reads == 3
    assert rig.dead_letters.filed == {long_id: "SERVING_INVALID_ARGUMENT"}
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+TERM"], ["+ACK"]]
    assert set(rig.memory.applied) == {("acme", "evt-1"), ("acme", "evt-3")}


async def test_every_unsettled_message_of_a_long_batch_gets_heartbeats_until_settled() -> None:
    # Given serving answering a batch read slowly, and a short heartbeat interval
    class Slow(InMemoryContentReader):
        async def read_many(self, tenant: str, content_refs: Sequence[str]) -> Mapping[str, EmailView | PermanentError]:
            await asyncio.sleep(0.35)
            return await super().read_many(tenant, content_refs)

    rig = _rig(Slow())
    rig.handler._heartbeat_interval = 0.1
    msgs = [rig.event("evt-1"), rig.event("evt-2")]

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then each message was told "in progress" while the batch worked, and acked once at the end
    for msg in msgs:
        verbs = rig.acks.verbs(msg)
        assert verbs[-1] == "+ACK" and verbs.count("+ACK") == 1
        assert verbs.count("+WPI") >= 2


class FakeSubscription:
    """A pull subscription over a list of ready messages; records every fetch's batch and timeout."""

    def __init__(self, ready: list[Msg]) -> None:
        self.ready = ready
        self.fetches: list[tuple[int, float]] = []

    async def fetch(self, batch: int = 1, timeout: float | None = 5) -> list[Msg]:
        self.fetches.append((batch, float(timeout or 0)))
        if not self.ready:
            await asyncio.sleep(0.01)
            raise TimeoutError
        taken, self.ready = self.ready[:batch], self.ready[batch:]
        return taken


@pytest.mark.parametrize(("batch_size", "concurrency", "expected"), [(4, 64, [4, 4, 2]), (8, 3, [3, 3, 3, 1])])
async def test_the_consumer_pulls_up_to_n_messages_per_batch_within_the_in_flight_limit(
    batch_size: int, concurrency: int, expected: list[int]
) -> None:
    # Given ten ready messages, and a handler that holds each batch until the test sees it
    rig = _rig()
    subscription = FakeSubscription([rig.event(f"evt-{i}") for i in range(10)])
    batches: list[int] = []
    in_flight, most_in_flight = 0, 0

    async def handle_batch(msgs: list[Msg]) -> None:
        nonlocal in_flight, most_in_flight
        batches.append(len(msgs))
        in_flight += len(msgs)
        most_in_flight = max(most_in_flight, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= len(msgs)

    consumer = LearningConsumer(
        subscription,  # type: ignore[arg-type]
        handle_batch,
        concurrency=concurrency,
        batch_size=batch_size,
        batch_wait=0.005,
        fetch_timeout=0.05,
    )

    # When the consumer runs until every message was dispatched
    await _run_until_dispatched(consumer, batches, 10)

    # Then the batches were at most N and never more than the limit in flight; the rest of a batch
    # was fetched with the short batch wait, the first message with the long fetch timeout
    assert batches == expected
    assert most_in_flight <= concurrency
    assert (1, 0.05) in subscription.fetches
    assert all(timeout <= 0.005 for size, timeout in subscription.fetches if size > 1)


async def _run_until_dispatched(consumer: LearningConsumer, batches: list[int], count: int) -> None:
    stop = asyncio.Event()
    runner = asyncio.create_task(consumer.run(stop))
    while sum(batches) < count:
        await asyncio.sleep(0.005)
    stop.set()
    await runner
    await consumer.drain(1.0)


def _collecting(
    subscription: FakeSubscription, *, batch_size: int, batch_wait: float
) -> tuple[LearningConsumer, list[int]]:
    """A consumer over `subscription` that records each dispatched batch's size."""
    batches: list[int] = []

    async def handle_batch(msgs: list[Msg]) -> None:
        batches.append(len(msgs))

    consumer = LearningConsumer(
        subscription,  # type: ignore[arg-type]
        handle_batch,
        concurrency=64,
        batch_size=batch_size,
        batch_wait=batch_wait,
        fetch_timeout=0.05,
    )
    return consumer, batches


class TrickleSubscription(FakeSubscription):
    """Messages arriving one at a time: each fetch finds at most one new message."""

    async def fetch(self, batch: int = 1, timeout: float | None = 5) -> list[Msg]:
        taken = await super().fetch(1, timeout)
        self.fetches[-1] = (batch, float(timeout or 0))
        return taken


async def test_a_batch_fills_from_a_stream_of_messages_until_full_or_the_batch_wait_is_over() -> None:
    # Given six messages that arrive one per fetch (a steady stream), batches of up to four
    rig = _rig()
    subscription = TrickleSubscription([rig.event(f"evt-{i}") for i in range(6)])
    consumer, batches = _collecting(subscription, batch_size=4, batch_wait=0.5)

    # When the consumer runs until every message was dispatched
    await _run_until_dispatched(consumer, batches, 6)

    # Then the first batch kept fetching until full (not first message + what had arrived: [2, 2, 2]),
    # and the last took what came within the batch wait
    assert batches == [4, 2]
    assert [size for size, _ in subscription.fetches][:4] == [1, 3, 2, 1]
    assert all(timeout <= 0.5 for size, timeout in subscription.fetches if size > 1)


class LingeringSubscription(FakeSubscription):
    """As nats-py's fetch: with nothing ready, lingers up to `timeout` for messages to arrive.
    `lingering` is true while a fetch waits, so a test can add messages at that moment."""

    def __init__(self, ready: list[Msg]) -> None:
        super().__init__(ready)
        self.lingering = False

    async def fetch(self, batch: int = 1, timeout: float | None = 5) -> list[Msg]:
        until = time.monotonic() + float(timeout or 0)
        while not self.ready and time.monotonic() < until:
            self.lingering = True
            await asyncio.sleep(0.005)
        self.lingering = False
        return await super().fetch(batch, timeout)


async def test_a_batch_whose_first_message_waited_a_window_in_the_stream_goes_with_what_the_server_holds() -> None:
    # Given the end of a burst: three messages stored 6 s ago, none coming after them, and a worker
    # whose batches of up to eight may wait 5 s to fill
    rig = _rig()
    subscription = LingeringSubscription([rig.event(f"evt-{i}", age=6.0) for i in range(3)])
    consumer, batches = _collecting(subscription, batch_size=8, batch_wait=5.0)

    # When the consumer runs until every message was dispatched
    started = time.monotonic()
    await asyncio.wait_for(_run_until_dispatched(consumer, batches, 3), timeout=3.0)

    # Then the three went as one batch at once, without waiting out the window for the other five
    assert batches == [3]
    assert time.monotonic() - started < 1.0


async def _batches_when_two_arrive(
    first_age: float, arrive_when: Callable[[LingeringSubscription, list[int]], bool]
) -> tuple[list[int], float]:
    """The batches a consumer (up to eight a batch, 2 s to fill) forms from one message stored
    `first_age` seconds ago and two fresh ones added once `arrive_when(subscription, batches)`;
    and the seconds until its first batch was dispatched."""
    rig = _rig()
    subscription = LingeringSubscription([rig.event("evt-0", age=first_age)])
    later = [rig.event(f"evt-{i}") for i in (1, 2)]
    consumer, batches = _collecting(subscription, batch_size=8, batch_wait=2.0)
    started = time.monotonic()
    first_dispatch: list[float] = []

    async def arrive() -> None:
        while not arrive_when(subscription, batches):
            await asyncio.sleep(0.001)
        if batches:
            first_dispatch.append(time.monotonic() - started)
        subscription.ready += later

    arriving = asyncio.create_task(arrive())
    await asyncio.wait_for(_run_until_dispatched(consumer, batches, 3), timeout=10.0)
    await arriving
    return batches, first_dispatch[0] if first_dispatch else float("nan")


async def test_a_fresh_batch_still_waits_its_window_for_messages_that_arrive_later() -> None:
    # Given one fresh message, and two more that arrive while the consumer waits to fill its batch
    batches, _ = await _batches_when_two_arrive(0.0, lambda subscription, _: subscription.lingering)
    # Then all three went in one batch: a fresh first message keeps the batch open for later ones
    assert batches == [3]


async def test_a_stale_first_message_does_not_hold_its_batch_open_for_later_ones() -> None:
    # Given one message stored 3 s ago (the tail of a backlog; the window is 2 s), and two fresh
    # ones that arrive only once a batch has gone
    batches, first = await _batches_when_two_arrive(3.0, lambda _, dispatched: bool(dispatched))
    # Then the stale one went alone well inside the window, and the fresh two in a batch of their own
    assert batches == [1, 2]
    assert first < 1.0
