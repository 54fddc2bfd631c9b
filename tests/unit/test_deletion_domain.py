"""The pure rules of deletion: what a forget covers, which locations it must reach, how stream
messages are matched, how stored outcomes lose their candidate keys; and Forget's input checks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.memory.core.service.idempotency import fingerprint
from services.memory.deletion.domain.deletion import (
    Deletion,
    DeletionStep,
    ForgetScope,
    MemoryRef,
    StepState,
    StreamMessage,
    locations_for,
    message_event_id,
    message_matches,
    predecessors,
    scrub_outcome,
    split_by_sources,
)
from services.memory.deletion.entrypoints.forget_rpc import forget


def _ref(memory_id: str, supersedes: str | None = None, status: str = "superseded") -> MemoryRef:
    return MemoryRef(memory_id, row_id=hash(memory_id) % 1000, user="alice", status=status, supersedes=supersedes)


def test_a_memory_is_forgotten_with_every_version_it_superseded_but_not_its_successors() -> None:
    chain = [_ref("v1"), _ref("v2", "v1"), _ref("v3", "v2", status="active"), _ref("v4", "v3", status="active")]
    assert [m.memory_id for m in predecessors(chain, "v3")] == ["v3", "v2", "v1"]
    assert [m.memory_id for m in predecessors(chain, "v1")] == ["v1"]
    assert predecessors(chain, "unknown") == []


def test_an_event_deletes_the_memories_it_alone_supports_and_unlinks_the_others() -> None:
    split = split_by_sources(
        {"only": frozenset({"e1"}), "shared": frozenset({"e1", "e2"}), "other": frozenset({"e2"})}, "e1"
    )
    assert split.deleted == {"only"} and split.unlinked == {"shared"}


def test_locations_reach_serving_and_the_streams_only_for_event_and_user_scopes() -> None:
    assert locations_for(ForgetScope.MEMORY, ["b", "a", "a"]) == [
        "retrieval", "memory_rows", "vectors", "derived_records", "replica:a", "replica:b",
    ]  # fmt: skip
    assert locations_for(ForgetScope.USER, ["a"])[4:] == ["streams", "content_blobs", "replica:a"]


def test_stream_messages_match_by_event_or_by_user_and_replays_name_their_event() -> None:
    message = StreamMessage(7, "e1", "dana", "ref-1")
    assert message_matches(message, frozenset({"e1"}), "")
    assert message_matches(message, frozenset(), "dana")
    assert not message_matches(message, frozenset({"e2"}), "")
    assert not message_matches(message, frozenset(), "")
    assert message_event_id("e1:replay:12", "") == "e1" and message_event_id("e1:dlq:3", "") == "e1"
    assert message_event_id("anything", "from-payload") == "from-payload"


def test_stored_outcomes_lose_candidate_keys_all_of_them_or_only_those_of_the_deleted_memories() -> None:
    outcome: dict[str, Any] = {
        "event_id": "e1",
        "applied": [
            {"candidate_key": "k1", "outcome": "store", "memory_id": "m1"},
            {"candidate_key": "k2", "outcome": "reject", "memory_id": ""},
        ],
    }
    assert [a["candidate_key"] for a in scrub_outcome(outcome)["applied"]] == ["", ""]
    assert [a["candidate_key"] for a in scrub_outcome(outcome, frozenset({"m1"}))["applied"]] == ["", "k2"]
    assert outcome["applied"][0]["candidate_key"] == "k1"  # the input is not changed


def test_a_deletion_is_complete_only_when_every_location_is_done() -> None:
    now = datetime.now(UTC)
    steps = (DeletionStep("retrieval", StepState.DONE), DeletionStep("replica:a", StepState.FAILED, "silent"))
    deletion = Deletion("d1", "acme", ForgetScope.MEMORY, "ops", now, steps=steps)
    assert not deletion.complete
    all_done = (DeletionStep("retrieval", StepState.DONE),)
    recorded = Deletion("d1", "acme", ForgetScope.MEMORY, "ops", now, completed_at=now, steps=all_done)
    assert recorded.complete and not Deletion("d1", "acme", ForgetScope.MEMORY, "ops", now, steps=all_done).complete


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({}, "target"),
        ({"reason": "no target"}, "target"),
        ({"memory_id": ""}, "memory_id"),
        ({"event_id": ""}, "event_id"),
        ({"memory_id": "m1", "reason": "x" * 1001}, "reason"),
        ({"memory_id": "m1", "request_id": "r" * 129}, "request_id"),
        ({"user": " "}, "user"),
    ],
)
def test_forget_requests_name_the_target_field_that_is_wrong(request_fields: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        forget(pb.ForgetRequest(tenant="acme", **request_fields), requested_by="ops")  # type: ignore[arg-type]
    assert refused.value.violations[0].field == field


def test_a_valid_forget_request_becomes_a_command_carrying_who_asked() -> None:
    command = forget(
        pb.ForgetRequest(tenant="acme", source_request_id="req-1", request_id="k"),
        requested_by="dpo@acme",
    )
    assert (command.scope, command.source_request_id, command.requested_by) == (ForgetScope.EVENT, "req-1", "dpo@acme")
    assert fingerprint(command) != fingerprint(
        forget(pb.ForgetRequest(tenant="acme", source_request_id="req-2"), requested_by="x")
    )
