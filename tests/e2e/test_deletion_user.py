"""Forgetting a user through the whole stack: every record of Dana goes, Erin's stay.

Dana sends the four Alice fixture requests (learned) and, while policy is down, one more copy of
Bob's mail that is dead-lettered and never replayed, so memory never learned it: only the stream
scan can find that event, and its content blob must go too. Erin, another user of the tenant,
sends a mail of her own. The operator forgets Dana with `memloop forget --user dana --wait`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from services.cli.stack import Stack
from services.cli.stack_file import write_stack_file
from services.common.gen.memloop.v1 import learning_event_pb2 as lpb
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from tests.e2e.conftest import make_stack
from tests.e2e.support import ALICE, Clients, eventually
from tests.e2e.test_deletion import FAST, NEEDLES, REPLICAS, _dead_letter, _dlq, _memloop, _search, _send
from tests.helpers import TestInfra
from tests.integration.deletion_support import database_hits, file_hits, persisted_row_ids, row_id_of, stream_hits

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

DANAS = (*NEEDLES, "after 10:00", "after 09:00", "focus work")
ERINS = "Please keep my meetings after 14:00 - lunch runs long."


@dataclass
class ForgottenUser:
    stack: Stack
    clients: Clients
    dead_letter: spb.HandleRequestResponse
    dana_rows: set[int]
    erin_id: str
    cli: str
    deletion_id: str


# Erin's own mail, authenticated by the mail system (without a passing verdict it would count as external).
ERIN_VERDICT = "mx.acme.example; dkim=pass header.d=acme.example; spf=pass smtp.mailfrom=acme.example; dmarc=pass"


def _erin_mail(clients: Clients) -> str:
    request = spb.HandleRequestRequest(
        request_id="req-erin-0001",
        tenant="acme",
        user="erin",
        thread="thr-erin",
        route="assistant.instruction",
        procedure_versions={"reply_style": "7"},
        content=spb.EmailContent(
            from_address="erin@acme.example", to_address="assistant@acme.example", subject="Lunch", body=ERINS
        ),
        reply="Noted.",
        owner_address="erin@acme.example",
        sender_authentication=lpb.SenderAuthentication(authentication_results=ERIN_VERDICT),
    )
    event_id: str = clients.serving.HandleRequest(request, timeout=30).event_id
    return event_id


@pytest.fixture(scope="module")
def forgotten_user(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForgottenUser]:
    data_dir = tmp_path_factory.mktemp("forget-user") / "stack"
    stack = make_stack(infra, data_dir, memory_replicas=2, extra_env=FAST).start()
    write_stack_file(stack, data_dir / "stack.json")
    clients = Clients(stack, "acme", roles=("reader", "writer", "admin", "service"))
    try:
        dead = _dead_letter(stack, clients, "schedule-with-bob", "dana", "req-dana-dead-letter")
        learned = [_send(clients, r["name"], "dana", f"req-dana-{i}").event_id for i, r in enumerate(ALICE["requests"])]
        learned.append(_erin_mail(clients))
        for event_id in learned:
            eventually(partial(clients.processed, event_id), timeout=90, what=f"event {event_id} learned")
        erin = clients.memories(user="erin", states=[pb.MEMORY_STATE_ACTIVE])
        dana_rows = {row_id_of(stack.memory_db_url, m.memory_id) for m in clients.memories(user="dana")}
        assert erin and dana_rows and database_hits(stack.serving_db_url, ["Q1 rollout"])
        dead_letter = spb.HandleRequestResponse(event_id=dead)
        cli = _memloop(stack, "forget", "--tenant", "acme", "--user", "dana", "--wait", "--data-dir", str(data_dir))
        assert cli.returncode == 0, cli.stderr
        deletion_id = cli.stdout.split()[1].rstrip(":")
        yield ForgottenUser(stack, clients, dead_letter, dana_rows, erin[0].memory_id, cli.stdout, deletion_id)
    finally:
        clients.close()
        stack.stop()


def test_memloop_forget_waits_until_every_location_is_done(forgotten_user: ForgottenUser) -> None:
    # Then: the command printed the deletion, then every location done, both replicas included
    assert "memories unretrievable now" in forgotten_user.cli
    for location in ("vectors", "derived_records", "streams", "content_blobs", "replica:memory", "replica:memory-1"):
        assert any(line.split()[:2] == [location, "done"] for line in forgotten_user.cli.splitlines()), location


def test_every_record_of_the_user_is_gone_from_retrieval_databases_indexes_streams_and_logs(
    forgotten_user: ForgottenUser, infra: TestInfra
) -> None:
    stack, clients = forgotten_user.stack, forgotten_user.clients
    # Then: nothing of Dana is retrievable on either replica, and her records are deleted and blank
    for replica in REPLICAS:
        assert set().union(*(_search(stack, replica, "dana", q) for q in DANAS)) == set(), replica
        index_dir = Path(stack.services[replica].env["MEMLOOP_MEMORY_INDEX_DIR"])
        assert persisted_row_ids(index_dir).isdisjoint(forgotten_user.dana_rows), replica
    assert {(m.state, m.text) for m in clients.memories(user="dana")} == {(pb.MEMORY_STATE_DELETED, "")}
    # And no database row, stream message (dead letters included), log line or span holds her text
    assert database_hits(stack.memory_db_url, DANAS) == []
    assert database_hits(stack.serving_db_url, DANAS) == []
    streams = (stack.spec.learning_stream, f"{stack.spec.learning_stream}_DLQ")
    assert stream_hits(stack.nats_url, streams, DANAS) == []
    assert file_hits([stack.spec.data_dir / "logs", stack.span_file], DANAS) == []
    if infra.embedded_nats is not None:
        folders = [p for p in (infra.embedded_nats.data_dir / "jetstream").rglob("*") if p.name in streams]
        assert folders and file_hits(folders, DANAS) == []


def test_the_dead_lettered_mail_memory_never_learned_is_gone_and_cannot_be_learned_later(
    forgotten_user: ForgottenUser,
) -> None:
    stack, clients = forgotten_user.stack, forgotten_user.clients
    event_id = forgotten_user.dead_letter.event_id
    # Then: the dead letter is gone, its blob is gone, and the event is closed (a late delivery learns nothing)
    code, listing = _dlq(stack, "list", "--json")
    assert code == 0 and event_id not in listing
    outbox = clients.serving.GetOutboxEvent(spb.GetOutboxEventRequest(tenant="acme", event_id=event_id))
    with pytest.raises(grpc.RpcError) as gone:
        clients.serving.ReadContent(spb.ReadContentRequest(tenant="acme", content_ref=outbox.event.content_ref))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    assert clients.processed(event_id)


def test_another_users_memories_and_content_are_untouched_and_retrievable(forgotten_user: ForgottenUser) -> None:
    stack, clients = forgotten_user.stack, forgotten_user.clients
    erin = clients.memory.GetMemory(pb.GetMemoryRequest(tenant="acme", memory_id=forgotten_user.erin_id)).memory
    assert erin.state == pb.MEMORY_STATE_ACTIVE and "14:00" in erin.text
    for replica in REPLICAS:
        assert forgotten_user.erin_id in _search(stack, replica, "erin", "when can I schedule meetings")
    outbox = clients.serving.GetOutboxEvent(spb.GetOutboxEventRequest(tenant="acme", request_id="req-erin-0001"))
    blob = clients.serving.ReadContent(spb.ReadContentRequest(tenant="acme", content_ref=outbox.event.content_ref))
    assert blob.content.body == ERINS


def test_a_minimal_audit_row_remains_per_deleted_memory(forgotten_user: ForgottenUser) -> None:
    audit = forgotten_user.clients.audit(forgotten_user.deletion_id)
    deleted = [a for a in audit if a.action == "memory.deleted"]
    assert len(deleted) == len(forgotten_user.dana_rows)
    assert {a.actor for a in audit} == {"operator"}
    assert all(
        json_format.MessageToDict(a.detail) == {"deletion_id": forgotten_user.deletion_id, "scope": "user"}
        for a in deleted
    )
