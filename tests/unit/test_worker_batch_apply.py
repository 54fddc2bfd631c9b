"""A batch's ready events go to memory in one BatchApplyLearning, and each message is settled by its
own item: an item memory refused fails alone; a call memory refused as a whole falls back to one
ApplyLearning per event; a call that failed transiently naks every event it carried."""

from __future__ import annotations

from collections.abc import Sequence

from services.worker.adapters.in_memory import InMemoryMemory
from services.worker.service.model import ApplyOutcome, ApplyRequest, PermanentError, TransientError, WorkerError
from tests.unit.test_worker_batch import UNAVAILABLE, _rig


async def test_one_batch_apply_per_tenant_and_an_item_refused_by_memory_is_dead_lettered_alone() -> None:
    # Given four events of two tenants, memory refusing one event's item permanently (e.g. an unsigned decision)
    rig = _rig()
    msgs = [rig.event("evt-a1"), rig.event("evt-b1", tenant="beta"), rig.event("evt-a2"), rig.event("evt-a3")]
    refused = PermanentError("MEMORY_PERMISSION_DENIED", "status=PERMISSION_DENIED", dependency="memory")
    rig.memory.fail_apply_of("evt-a2", refused)

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then memory got one batch apply per tenant and nothing one by one
    assert (rig.memory.batch_apply_calls, rig.memory.apply_calls) == (2, 2)
    # Then the refused event alone is dead-lettered; the others are committed and acked
    assert rig.dead_letters.filed == {"evt-a2": "MEMORY_PERMISSION_DENIED"}
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+ACK"], ["+TERM"], ["+ACK"]]
    assert set(rig.memory.applied) == {("acme", "evt-a1"), ("beta", "evt-b1"), ("acme", "evt-a3")}


async def test_a_batch_apply_refused_as_a_whole_falls_back_to_one_apply_per_event() -> None:
    # Given memory refusing the batch call itself (as its edge does for a field over a limit),
    # and then refusing one event's single call
    class Strict(InMemoryMemory):
        async def apply_many(self, tenant: str, requests: Sequence[ApplyRequest]) -> list[ApplyOutcome | WorkerError]:
            self.batch_apply_calls += 1
            raise PermanentError("MEMORY_INVALID_ARGUMENT", "fields=requests[1].event_id", dependency="memory")

    rig = _rig(memory=Strict())
    msgs = [rig.event("evt-1"), rig.event("evt-2"), rig.event("evt-3")]
    rig.memory.fail_apply_of("evt-2", PermanentError("MEMORY_INVALID_ARGUMENT", "fields=event_id", dependency="memory"))

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then after the one refused batch call each event was applied by its own call; only the culprit fails
    assert rig.memory.batch_apply_calls == 1 and rig.memory.apply_calls == 3
    assert rig.dead_letters.filed == {"evt-2": "MEMORY_INVALID_ARGUMENT"}
    assert [rig.acks.verbs(m) for m in msgs] == [["+ACK"], ["+TERM"], ["+ACK"]]
    assert set(rig.memory.applied) == {("acme", "evt-1"), ("acme", "evt-3")}


async def test_a_batch_apply_failing_transiently_naks_every_event_it_carried_and_acks_none() -> None:
    # Given memory failing the batch call transiently (down between the lookups and the commit)
    rig = _rig()
    msgs = [rig.event(f"evt-{i}") for i in range(3)]
    rig.memory.fail_next_apply(TransientError("MEMORY_UNAVAILABLE", UNAVAILABLE, dependency="memory"))

    # When the batch is handled
    await rig.handler.handle_batch(msgs)

    # Then nothing was committed, nothing acked, every event naked to be retried, none dead-lettered
    assert rig.memory.applied == {}
    assert [rig.acks.verbs(m) for m in msgs] == [["-NAK"]] * 3
    assert rig.dead_letters.filed == {}
