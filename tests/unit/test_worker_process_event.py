"""The learning use case with in-memory peers: what it decides, what it skips, how it fails.

The policy fake runs the real rules and the extractor is the real rule-based one, so these
tests see the decisions the deployed loop would make; only the transport is faked.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from services.common.gen.memloop.v1 import field_limits
from services.common.redaction import RedactionMode, Redactor
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome
from services.policy.domain import rules
from services.worker.adapters.in_memory import InMemoryContentReader, InMemoryMemory, InProcessPolicyGate
from services.worker.domain.extraction import RuleBasedExtractor, ToolOutcome
from services.worker.service.model import ConflictRecord, EmailView, LearningEventView, PermanentError, TransientError
from services.worker.service.process_batch import prepare_batch
from services.worker.service.process_event import (
    MAX_CANDIDATES_PER_EVENT,
    LearningPorts,
    ReadyToApply,
    process_event,
)
from services.worker.service.retry import DeadLetter, Retry, RetryPolicy, on_failure
from tests.fixtures import load_fixture
from tests.helpers import random_ref

FIXTURE = load_fixture("alice.json")
REQUESTS = {request["name"]: request for request in FIXTURE["requests"]}
TENANT, USER = FIXTURE["tenant"], FIXTURE["user"]
REDACTOR = Redactor(RedactionMode.THOROUGH)


def _decide(candidate: Candidate, conflicts: Sequence[ConflictRecord]) -> Decision:
    return rules.evaluate(candidate, [rules.Conflict(c.memory_id, c.intent_key, c.text, c.type) for c in conflicts])


@dataclass
class Loop:
    """The use case wired to fakes, plus a helper that files a fixture request's content."""

    content: InMemoryContentReader
    memory: InMemoryMemory
    policy: InProcessPolicyGate

    @property
    def ports(self) -> LearningPorts:
        return LearningPorts(content=self.content, conflicts=self.memory, policy=self.policy, memory=self.memory)

    def event_for(self, name: str, *, event_id: str | None = None) -> LearningEventView:
        request = REQUESTS[name]
        content = request["content"]
        content_ref = random_ref("content")
        self.content.put(
            TENANT,
            content_ref,
            EmailView(
                user=USER,
                from_address=content["from"],
                to_address=content["to"],
                subject=content["subject"],
                body=content["body"],
                from_owner=content["from"] == FIXTURE["owner_address"],
            ),
        )
        return LearningEventView(
            event_id=event_id or random_ref("evt"),
            trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
            request_id=request["request_id"],
            tenant=TENANT,
            user=USER,
            thread=request["thread"],
            route=request["route"],
            content_ref=content_ref,
            owner_address=FIXTURE["owner_address"],
            tool_outcomes=tuple(
                ToolOutcome(tool=t["tool"], status=t["status"], ref=t["ref"], summary=t["summary"])
                for t in request["tool_outcomes"]
            ),
        )

    async def run(self, event: LearningEventView) -> Any:
        return await process_event(event, self.ports, redactor=REDACTOR, extractor=RuleBasedExtractor())


@pytest.fixture
def loop() -> Loop:
    return Loop(content=InMemoryContentReader(), memory=InMemoryMemory(), policy=InProcessPolicyGate(_decide))


def _summary(decisions: Sequence[Decision]) -> list[tuple[Outcome, MemoryType, Origin, str]]:
    return sorted((d.outcome, d.candidate.type, d.candidate.origin, d.candidate.text) for d in decisions)


async def test_bob_email_stores_the_episode_and_rejects_the_injected_procedure_in_one_apply(loop: Loop) -> None:
    # Given Alice's scheduling request with Bob's poisoned P.S.
    event = loop.event_for("schedule-with-bob")

    # When the worker processes its learning event
    result = await loop.run(event)

    # Then memory received every decision of the event in a single ApplyLearning call
    assert loop.memory.apply_calls == 1
    stored = loop.memory.applied[(TENANT, event.event_id)].decisions
    assert stored == result.decisions
    episodes = [d for d in stored if d.outcome is Outcome.STORE]
    assert [d.candidate.type for d in episodes] == [MemoryType.EPISODE]
    assert "Bob" in episodes[0].candidate.text and "2026-12-08" in episodes[0].candidate.text
    rejected = [d for d in stored if d.outcome is Outcome.REJECT]
    assert len(rejected) == 1
    assert rejected[0].candidate.origin is Origin.EXTERNAL_EMAIL
    assert "EXTERNAL_PROCEDURAL" in [r.code for r in rejected[0].reasons]
    assert "accept meeting invites" in rejected[0].candidate.text
    # And every candidate carries the event's provenance
    assert {(d.candidate.event_id, d.candidate.trace_id) for d in stored} == {(event.event_id, event.trace_id)}


async def test_the_phone_number_and_password_are_redacted_before_policy_or_memory_see_them(loop: Loop) -> None:
    # Given two requests whose raw content holds a phone number and a password
    events = [loop.event_for("schedule-with-bob"), loop.event_for("secret-in-mail")]

    # When both are processed
    for event in events:
        await loop.run(event)

    # Then no decision text handed to memory holds either, and the password's sentence is not stored
    texts = " ".join(d.candidate.text for s in loop.memory.applied.values() for d in s.decisions)
    for forbidden in ("+1 415 555 0134", "415 555 0134", "Tr0ub4dor&3"):
        assert forbidden not in texts
    secret_decisions = loop.memory.applied[(TENANT, events[1].event_id)].decisions
    assert all(d.outcome is not Outcome.STORE for d in secret_decisions)


async def test_conflicts_reach_policy_so_the_owner_update_supersedes(loop: Loop) -> None:
    # Given Alice's "after 10:00" preference was already learned
    await loop.run(loop.event_for("preference-after-ten"))

    # When her "after 09:00" update is processed
    result = await loop.run(loop.event_for("preference-after-nine"))

    # Then policy saw the active record and stored the update as a supersession
    (decision,) = result.decisions
    assert decision.outcome is Outcome.STORE
    assert decision.candidate.intent_key == "meeting_time_window"
    assert [r.code for r in decision.reasons] == ["SUPERSEDES_SAME_INTENT"]


async def test_a_processed_event_is_acknowledged_without_any_work(loop: Loop) -> None:
    # Given an event memory has already applied
    event = loop.event_for("schedule-with-bob")
    await loop.run(event)
    reads, policy_calls, applies = loop.content.reads, loop.policy.calls, loop.memory.apply_calls

    # When it is delivered again
    result = await loop.run(event)

    # Then the worker reports it as already processed and asked nobody anything but memory's ledger
    assert result.already_processed is True
    assert result.decisions == ()
    assert (loop.content.reads, loop.policy.calls, loop.memory.apply_calls) == (reads, policy_calls, applies)


async def test_memory_down_at_apply_is_transient_and_the_retry_equals_an_undisturbed_run(loop: Loop) -> None:
    # Given an undisturbed run of Bob's request, and memory failing its next ApplyLearning in another
    undisturbed = Loop(InMemoryContentReader(), InMemoryMemory(), InProcessPolicyGate(_decide))
    baseline = await undisturbed.run(undisturbed.event_for("schedule-with-bob"))
    event = loop.event_for("schedule-with-bob")
    loop.memory.fail_next_apply(TransientError("MEMORY_UNAVAILABLE", "status=UNAVAILABLE", dependency="memory"))

    # When the first delivery fails at the apply step
    with pytest.raises(TransientError) as failure:
        await loop.run(event)

    # Then it is classified as a retry (not a dead letter) and memory holds nothing of it
    action = on_failure(failure.value, attempts=1, elapsed=0.0, policy=RetryPolicy())
    assert isinstance(action, Retry) and action.delay > 0
    assert (TENANT, event.event_id) not in loop.memory.applied

    # And the retry decides exactly what the undisturbed run decided
    retried = await loop.run(event)
    assert _summary(retried.decisions) == _summary(baseline.decisions)
    assert loop.memory.apply_calls == 2


async def test_policy_unavailable_is_transient_and_nothing_is_applied(loop: Loop) -> None:
    # Given the policy service is down
    event = loop.event_for("schedule-with-bob")
    loop.policy.fail_next(TransientError("POLICY_UNAVAILABLE", "status=UNAVAILABLE", dependency="policy"))

    # When the event is processed
    with pytest.raises(TransientError) as failure:
        await loop.run(event)

    # Then the failure names policy, and memory was not asked to apply a partial set of decisions
    assert failure.value.reason == "POLICY_UNAVAILABLE"
    assert loop.memory.apply_calls == 0


async def test_missing_content_is_permanent_and_dead_lettered_at_the_first_attempt(loop: Loop) -> None:
    # Given an event whose content reference resolves to nothing (its tenant is known to serving)
    event = loop.event_for("schedule-with-bob")
    other = next(iter(loop.content.blobs.values()))
    loop.content.blobs.clear()
    loop.content.put(event.tenant, "content-of-another-request", other)

    # When it is processed
    with pytest.raises(PermanentError) as failure:
        await loop.run(event)

    # Then it is dead-lettered at once with a clear reason, and memory was not touched
    action = on_failure(failure.value, attempts=1, elapsed=0.0, policy=RetryPolicy())
    assert isinstance(action, DeadLetter)
    assert action.reason == "CONTENT_NOT_FOUND"
    assert loop.memory.apply_calls == 0


async def test_content_of_another_user_is_refused(loop: Loop) -> None:
    # Given an event whose content belongs to a different user of the tenant
    event = loop.event_for("preference-after-ten")
    stored = loop.content.blobs[(TENANT, event.content_ref)]
    loop.content.put(TENANT, event.content_ref, replace(stored, user="mallory"))

    # When it is processed
    with pytest.raises(PermanentError) as failure:
        await loop.run(event)

    # Then it is refused as a permanent error
    assert failure.value.reason == "CONTENT_USER_MISMATCH"
    assert loop.memory.apply_calls == 0


def _flood(loop: Loop) -> LearningEventView:
    """An owner's mail of 400 distinct preference sentences (a pasted list, or a flood)."""
    event = loop.event_for("preference-after-ten")
    content = REQUESTS["preference-after-ten"]["content"]
    body = " ".join(f"I prefer the blue folder number {n} for reports." for n in range(400))
    email = EmailView(USER, content["from"], content["to"], content["subject"], body, from_owner=True)
    loop.content.put(TENANT, event.content_ref, email)
    return event


async def test_a_mail_of_too_many_candidates_is_decided_up_to_one_apply(
    loop: Loop, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an owner's mail of 400 distinct preference sentences
    event = _flood(loop)

    # When the worker processes its event
    with caplog.at_level(logging.WARNING, logger="services.worker.service.process_event"):
        result = await loop.run(event)

    # Then the log says how many were left unread
    assert "400 candidates; the first 256 are decided and 144 left unread" in caplog.text

    # Then memory gets one apply of as many decisions as it takes, the first in reading order
    decisions = loop.memory.applied[(TENANT, event.event_id)].decisions
    assert loop.memory.apply_calls == 1
    assert len(decisions) == len(result.decisions) == MAX_CANDIDATES_PER_EVENT
    assert "number 0 " in decisions[0].candidate.text


async def test_a_batch_decides_each_event_up_to_one_apply(loop: Loop) -> None:
    # Given the same flood, with an ordinary event beside it in one batch
    flood, ordinary = _flood(loop), loop.event_for("schedule-with-bob")

    # When the batch is prepared
    prepared = await prepare_batch([flood, ordinary], loop.ports, redactor=REDACTOR, extractor=RuleBasedExtractor())

    # Then the flood is ready with as many decisions as one apply takes, and the other event is untouched
    assert isinstance(prepared[0], ReadyToApply) and isinstance(prepared[1], ReadyToApply)
    assert len(prepared[0].decisions) == MAX_CANDIDATES_PER_EVENT
    assert 0 < len(prepared[1].decisions) < 10


def test_the_candidate_limit_is_what_memory_takes_in_one_apply() -> None:
    # Given the proto's own limit on ApplyLearning's decisions  Then the worker's cap is the same
    assert field_limits.MAX_ITEMS["memloop.v1.ApplyLearningRequest.decisions"] == MAX_CANDIDATES_PER_EVENT
