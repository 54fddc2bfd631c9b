"""No secret or raw PII at rest: the labelled positives through HandleRequest, then every store dumped.

The whole stack runs as processes. Each labelled secret or PII string of the redaction corpus is
sent the ways a client can send text: in the mail body (owner mail with a passing sender verdict,
and external mail), the subject, the reply and a tool outcome's summary. Once memory has processed
every event, the test dumps both databases (every row of every table as JSON, every bytea column as
bytes), both NATS streams, every file under the stack's data folder (service logs, FAISS indexes)
and the span file, and asserts that no labelled value is anywhere.

``make test`` sends a representative subset (at most 60 requests: every kind and shape); set
``MEMLOOP_AT_REST_FULL=1`` (``make test-at-rest-full``) to send every positive of the corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import pytest
from google.protobuf.json_format import MessageToDict

from services.cli.stack import Stack
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as ppb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as ppb_grpc
from services.common.gen.memloop.v1 import learning_event_pb2 as lpb
from services.common.gen.memloop.v1 import memory_service_pb2 as mpb
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from services.common.grpc_client import sync_channel
from tests.e2e.conftest import make_stack
from tests.e2e.support import Clients, eventually, fresh_tenant
from tests.helpers import TestInfra
from tests.integration.deletion_support import database_hits, file_hits, stream_hits
from tests.redaction_eval import KINDS, load_corpus

SUBSET_SIZE = 60
# Sixty requests and their learning take about two minutes on two loaded cores; the full set, longer.
pytestmark = pytest.mark.timeout(3600 if os.environ.get("MEMLOOP_AT_REST_FULL") == "1" else 600)
OWNER = "alice@acme.example"
PASSING = "mx.acme.example; dkim=pass header.d=acme.example; spf=pass smtp.mailfrom=acme.example; dmarc=pass"
# A value this short could turn up by chance in an id or a timestamp: such strings are sent but not searched for.
MIN_NEEDLE = 7

Record = dict[str, object]


def positives() -> list[Record]:
    """The subset: round-robin over kind/shape so every shape is sent before any is sent twice."""
    records = [r for r in load_corpus() if r["kind"] != "none"]
    if os.environ.get("MEMLOOP_AT_REST_FULL") == "1":
        return records
    by_shape: dict[str, list[Record]] = {}
    for record in records:
        by_shape.setdefault(f"{record['kind']}/{record['subkind']}", []).append(record)
    chosen: list[Record] = []
    while len(chosen) < SUBSET_SIZE and any(by_shape.values()):
        for shape in sorted(by_shape):
            if by_shape[shape] and len(chosen) < SUBSET_SIZE:
                chosen.append(by_shape[shape].pop(0))
    return chosen


def request_for(index: int, record: Record, tenant: str) -> spb.HandleRequestRequest:
    """The text where a client puts text: body (owner or external mail), subject, reply, tool summary."""
    text, owner = str(record["text"]), index % 2 == 0
    where = index % 4
    return spb.HandleRequestRequest(
        request_id=f"req-at-rest-{index:04d}",
        tenant=tenant,
        user="alice",
        thread=f"thr-at-rest-{index}",
        route="assistant.instruction",
        procedure_versions={"reply_style": "7"},
        tool_outcomes=[lpb.ToolOutcome(tool="notes.save", status="ok", ref=f"note-{index}",
                                       summary=text if where == 3 else "Saved the note.")],
        content=spb.EmailContent(
            from_address=OWNER if owner else "dana@partner.example",
            to_address="assistant@acme.example" if owner else OWNER,
            subject=text.splitlines()[0][:200] if where == 1 else "A note",
            body=f"Hi,\n{text}\nI prefer short replies.\nThanks",
        ),
        reply=f"Noted: {text}" if where == 2 else "Noted.",
        owner_address=OWNER,
        sender_authentication=lpb.SenderAuthentication(authentication_results=PASSING if owner else ""),
    )  # fmt: skip


# How many positives go through the doors a person writes by, besides HandleRequest: a memory
# correction with its reason, a deprecation's reason, and a learned procedure with its details.
OPERATOR_WRITES = 12


def operator_writes(stack: Stack, clients: Clients, records: list[Record]) -> dict[str, int]:
    """Send positives as an operator would: SupersedeMemory, DeprecateMemory, SaveLearnedProcedure."""
    token = stack.token(clients.tenant, roles=("reader", "writer", "reviewer", "admin"), subject="officer.kim")
    active = clients.memories(states=[mpb.MEMORY_STATE_ACTIVE])
    done = {"supersede": 0, "deprecate": 0, "procedure": 0}
    with sync_channel(stack.services["memory"].target, token) as channel:
        procedures = ppb_grpc.LearnedProcedureServiceStub(channel)
        for index, record in enumerate(records[:OPERATOR_WRITES]):
            text, door = str(record["text"]), index % 3
            if door == 0 and active:
                clients.memory.SupersedeMemory(
                    mpb.SupersedeMemoryRequest(tenant=clients.tenant, memory_id=active.pop().memory_id,
                                               text=f"Corrected: {text}", request_id=f"fix-{index}",
                                               reason=f"the owner said: {text}"),
                    timeout=30,
                )  # fmt: skip
                done["supersede"] += 1
            elif door == 1 and active:
                clients.memory.DeprecateMemory(
                    mpb.DeprecateMemoryRequest(tenant=clients.tenant, memory_id=active.pop().memory_id, reason=text),
                    timeout=30,
                )
                done["deprecate"] += 1
            elif door == 2:
                request = ppb.SaveLearnedProcedureRequest(
                    tenant=clients.tenant, intent_key=f"at_rest.rule_{index}", title=f"Rule for {text[:80]}",
                    kind=ppb.PROCEDURE_KIND_SUBSTANTIVE, scope="invoices", trigger=f"When a mail says {text}",
                    action="Check the invoice with the owner by phone.", rationale=text,
                )  # fmt: skip
                request.details.update({"example": text, "notes": [text]})
                procedures.SaveLearnedProcedure(request, timeout=30)
                done["procedure"] += 1
    return done


@dataclass
class AtRest:
    stack: Stack
    clients: Clients
    needles: list[str]
    owner_event: str
    operator_doors: dict[str, int]


@pytest.fixture(scope="module")
def at_rest(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AtRest]:
    stack = make_stack(infra, tmp_path_factory.mktemp("at-rest") / "stack").start()
    tenant = fresh_tenant()
    clients = Clients(stack, tenant, roles=("reader", "writer", "reviewer", "admin"))
    try:
        records = positives()
        events = [clients.serving.HandleRequest(request_for(i, r, tenant), timeout=30).event_id
                  for i, r in enumerate(records)]  # fmt: skip
        for event_id in events:
            eventually(partial(clients.processed, event_id), timeout=120, what=f"memory processed {event_id}")
        doors = operator_writes(stack, clients, records)
        needles = sorted({str(v) for r in records for v in r["values"] if len(str(v)) >= MIN_NEEDLE})  # type: ignore[attr-defined]
        yield AtRest(stack, clients, needles, events[0], doors)
    finally:
        clients.close()
        stack.stop()


def test_the_subset_covers_every_kind_with_searchable_values(at_rest: AtRest) -> None:
    # Given the requests sent  Then every kind of the corpus was among them, with enough values to search for
    kinds = {str(r["kind"]) for r in positives()}
    assert kinds == set(KINDS)
    assert len(at_rest.needles) >= 40


def test_no_positive_is_in_either_database(at_rest: AtRest) -> None:
    # Given positives also written by an operator: corrections, reasons, a procedure and its details
    assert all(count >= 2 for count in at_rest.operator_doors.values()), at_rest.operator_doors
    # When every row of every table of serving's and memory's databases is dumped
    stack = at_rest.stack
    # Then the dump does see the mails' ordinary words, and no labelled secret or PII value is in it
    assert database_hits(stack.serving_db_url, ["I prefer short replies"])
    assert database_hits(stack.serving_db_url, at_rest.needles) == []
    assert database_hits(stack.memory_db_url, at_rest.needles) == []


def test_no_positive_is_in_the_streams_the_logs_the_indexes_or_the_spans(at_rest: AtRest, infra: TestInfra) -> None:
    stack = at_rest.stack
    streams = (stack.spec.learning_stream, f"{stack.spec.learning_stream}_DLQ")
    # When the learning and dead-letter streams are read whole, and every file the stack wrote is searched
    # Then none holds a labelled value (stream messages, service logs, FAISS index files, spans)
    assert stream_hits(stack.nats_url, streams, ["Saved the note."])  # the reader sees the events
    assert stream_hits(stack.nats_url, streams, at_rest.needles) == []
    if infra.embedded_nats is not None:
        store = infra.embedded_nats.data_dir / "jetstream"
        folders = [p for p in store.rglob("*") if p.is_dir() and p.name in streams]
        assert folders and file_hits(folders, at_rest.needles) == []
    assert file_hits([stack.spec.data_dir, stack.span_file], at_rest.needles) == []


def test_memorys_audit_keeps_the_sender_verdict(at_rest: AtRest) -> None:
    # Given the first request: the owner's mail with a passing DMARC/DKIM/SPF verdict
    # When memory's audit entries of its event are listed
    entries = at_rest.clients.audit(at_rest.owner_event)
    processed = [MessageToDict(e.detail) for e in entries if e.action == "event.processed"]
    # Then the event's entry holds the verdict and serving's conclusion, and neither an address nor a domain
    assert processed, [e.action for e in entries]
    sender = processed[0]["sender"]
    assert (sender["dmarc"], sender["dkim"], sender["spf"], sender["owner_claim"]) == (
        "pass",
        "pass",
        "pass",
        "verified",
    )
    assert "@" not in json.dumps(sender) and "acme.example" not in json.dumps(sender)
