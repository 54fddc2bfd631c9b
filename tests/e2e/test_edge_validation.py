"""Hostile input against the whole stack as processes: every service refuses it at the edge.

NUL characters, oversized fields, Timestamps out of range, NaN (also inside a Struct), undefined
enum values and negative page sizes each come back as INVALID_ARGUMENT naming the field, never
INTERNAL and never RESOURCE_EXHAUSTED, and no row of either database changes. Random ids that
are well formed strings but no known record answer NOT_FOUND (or "nothing deleted"), not INTERNAL.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import psycopg
import pytest

from services.cli.stack import Stack
from services.common.auth import ALL_TENANTS, SERVICE_ROLE
from services.common.gen.memloop.v1 import (
    candidate_pb2,
    consolidation_service_pb2,
    consolidation_service_pb2_grpc,
    learned_procedure_service_pb2,
    learned_procedure_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    policy_service_pb2,
    policy_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel
from services.common.grpc_errors import error_details
from tests.e2e.support import alice_request, fresh_tenant
from tests.integration.deletion_support import libpq_url

pytestmark = pytest.mark.e2e

HUGE = "A" * 100_000
ROLES = ("reader", "writer", "reviewer", "admin")


class Stubs:
    """One stub per service, the tenant's for user calls and the loop's for loop-only calls."""

    def __init__(self, stack: Stack, tenant: str) -> None:
        self._channels: list[grpc.Channel] = []
        user, loop = stack.token(tenant, roles=ROLES), stack.service_token()
        memory = self._channel(stack, "memory", user)
        loop_memory = self._channel(stack, "memory", loop)
        self.serving = serving_service_pb2_grpc.ServingServiceStub(self._channel(stack, "serving", user))
        self.loop_serving = serving_service_pb2_grpc.ServingServiceStub(self._channel(stack, "serving", loop))
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(memory)
        self.loop_memory = memory_service_pb2_grpc.MemoryServiceStub(loop_memory)
        self.procedures = learned_procedure_service_pb2_grpc.LearnedProcedureServiceStub(memory)
        self.consolidation = consolidation_service_pb2_grpc.ConsolidationServiceStub(memory)
        self.policy = policy_service_pb2_grpc.PolicyServiceStub(self._channel(stack, "policy", loop))

    def _channel(self, stack: Stack, name: str, token: str) -> grpc.Channel:
        channel = sync_channel(stack.services[name].target, token)
        self._channels.append(channel)
        return channel

    def close(self) -> None:
        for channel in self._channels:
            channel.close()


@pytest.fixture
def stubs(stack: Stack) -> Iterator[tuple[Stubs, str]]:
    tenant = fresh_tenant()
    made = Stubs(stack, tenant)
    try:
        yield made, tenant
    finally:
        made.close()


def row_counts(url: str) -> dict[str, int]:
    """Rows of every table of the database (an owner's URL, so row-level security does not hide any)."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT quote_ident(table_name) FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            ).fetchall()
        ]
        return {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in tables}  # type: ignore[index]


def hostile_calls(s: Stubs, tenant: str) -> list[tuple[str, Callable[[], Any], str]]:
    """(what, call, the field the refusal must name), one per class of bad input and service."""
    body_nul = alice_request("schedule-with-bob", tenant)
    body_nul.content.body = "Hi Alice\x00"
    huge_reply = alice_request("preference-after-ten", tenant)
    huge_reply.reply = "r" * 70_000
    apply = memory_service_pb2.ApplyLearningRequest(tenant=tenant, event_id="evt-1", user="alice")
    apply.event_time.seconds = 253_402_300_800  # one second past 9999-12-31T23:59:59Z
    save = learned_procedure_service_pb2.SaveLearnedProcedureRequest(
        tenant=tenant, intent_key="psp.address", title="t", scope="s", trigger="t", action="a", rationale="r"
    )
    save.details.update({"limits": {"threshold": math.nan}})
    nan_candidate = candidate_pb2.Candidate(candidate_key="k", text="x", confidence=math.nan)
    return [
        ("HandleRequest NUL", lambda: s.serving.HandleRequest(body_nul, timeout=30), "content.body"),
        ("HandleRequest oversized", lambda: s.serving.HandleRequest(huge_reply, timeout=30), "reply"),
        (
            "ReadContent NUL",
            lambda: s.loop_serving.ReadContent(
                serving_service_pb2.ReadContentRequest(tenant=tenant, content_ref="c\x00")
            ),
            "content_ref",
        ),
        (
            "DeleteContent huge",
            lambda: s.serving.DeleteContent(
                serving_service_pb2.DeleteContentRequest(tenant=tenant, event_id=HUGE, deletion_id="d")
            ),
            "event_id",
        ),
        (
            "GetOutboxEvent NUL",
            lambda: s.serving.GetOutboxEvent(
                serving_service_pb2.GetOutboxEventRequest(tenant=tenant, request_id="\x00")
            ),
            "request_id",
        ),
        ("ApplyLearning event_time", lambda: s.loop_memory.ApplyLearning(apply, timeout=30), "event_time"),
        (
            "GetMemory NUL",
            lambda: s.memory.GetMemory(memory_service_pb2.GetMemoryRequest(tenant=tenant, memory_id="m\x00")),
            "memory_id",
        ),
        (
            "SupersedeMemory huge",
            lambda: s.memory.SupersedeMemory(
                memory_service_pb2.SupersedeMemoryRequest(tenant=tenant, memory_id="m", text=HUGE, request_id="r")
            ),
            "text",
        ),
        (
            "ListMemories negative page",
            lambda: s.memory.ListMemories(memory_service_pb2.ListMemoriesRequest(tenant=tenant, page_size=-1)),
            "page_size",
        ),
        (
            "ListReviewItems undefined enum",
            lambda: s.memory.ListReviewItems(memory_service_pb2.ListReviewItemsRequest(tenant=tenant, state=99)),  # type: ignore[arg-type]
            "state",
        ),
        (
            "Forget huge user",
            lambda: s.memory.Forget(memory_service_pb2.ForgetRequest(tenant=tenant, user=HUGE)),
            "user",
        ),
        (
            "FindConflicts NaN",
            lambda: s.loop_memory.FindConflicts(
                memory_service_pb2.FindConflictsRequest(tenant=tenant, user="alice", candidates=[nan_candidate])
            ),
            "candidates[0].confidence",
        ),
        (
            "SaveLearnedProcedure NaN in Struct",
            lambda: s.procedures.SaveLearnedProcedure(save),
            "details[limits][threshold]",
        ),
        (
            "RunConsolidation NUL",
            lambda: s.consolidation.RunConsolidation(
                consolidation_service_pb2.RunConsolidationRequest(tenant=tenant, user="al\x00ice")
            ),
            "user",
        ),
        (
            "Evaluate NUL",
            lambda: s.policy.Evaluate(
                policy_service_pb2.EvaluateRequest(candidate=candidate_pb2.Candidate(candidate_key="k", text="a\x00"))
            ),
            "candidate.text",
        ),
    ]


def test_hostile_input_is_refused_at_every_services_edge_naming_the_field_and_writes_nothing(
    stack: Stack, stubs: tuple[Stubs, str]
) -> None:
    s, tenant = stubs
    # Given the row counts of both databases
    before = (row_counts(stack.memory_db_url), row_counts(stack.serving_db_url))
    # When each hostile request is sent to the running processes
    outcomes = {}
    for what, call, _field in hostile_calls(s, tenant):
        with pytest.raises(grpc.RpcError) as refused:
            call()
        outcomes[what] = (refused.value.code(), error_details(refused.value)[1][:1])
    # Then each is INVALID_ARGUMENT naming its field, and no row was written anywhere
    expected = {what: (grpc.StatusCode.INVALID_ARGUMENT, [field]) for what, _call, field in hostile_calls(s, tenant)}
    assert outcomes == expected
    assert (row_counts(stack.memory_db_url), row_counts(stack.serving_db_url)) == before


# The services each process serves, by the first part of its name (memory's split halves included).
_SERVED = {
    "serving": (serving_service_pb2,),
    "memory": (memory_service_pb2, learned_procedure_service_pb2, consolidation_service_pb2),
    "policy": (policy_service_pb2,),
}
_SNOWMAN = "\u2603"


def _first_string(descriptor: Any) -> list[str]:
    """The path to the first singular string field, looking into singular message fields in order."""
    for field in descriptor.fields:
        if field.is_repeated:
            continue
        if field.type == field.TYPE_STRING:
            return [field.name]
        if field.type == field.TYPE_MESSAGE and (inner := _first_string(field.message_type)):
            return [field.name, *inner]
    return []


def _serves(call: Any) -> bool:
    """Whether the process serves the method: an empty request is refused or answered, not UNIMPLEMENTED."""
    try:
        call(b"", timeout=30)
    except grpc.RpcError as error:
        return bool(error.code() != grpc.StatusCode.UNIMPLEMENTED)
    return True


def _undecodable(request_type: Any) -> dict[str, bytes]:
    """Bytes that are not a `request_type`: its first string field holding bad UTF-8, cut short, noise."""
    request = request_type()
    *parents, leaf = _first_string(request_type.DESCRIPTOR)
    target = request
    for parent in parents:
        target = getattr(target, parent)
    setattr(target, leaf, f"x{_SNOWMAN}")
    valid = request.SerializeToString()
    return {
        "bad UTF-8": valid.replace(_SNOWMAN.encode(), b"\xff\xfe\xfd"),
        "truncated": valid[:-1],
        "noise": b"\xff\xff\xff\xff",
    }


def test_bytes_that_are_not_the_request_are_invalid_argument_on_every_method_and_write_nothing(
    stack: Stack,
) -> None:
    # Given a token every method admits (all roles, every tenant) and the row counts of both databases
    token = stack.token(ALL_TENANTS, roles=(*ROLES, SERVICE_ROLE))
    before = (row_counts(stack.memory_db_url), row_counts(stack.serving_db_url))
    outcomes: dict[str, tuple[grpc.StatusCode, list[str]]] = {}
    expected: dict[str, tuple[grpc.StatusCode, list[str]]] = {}
    for name, handle in stack.services.items():
        modules = _SERVED.get(name.split("-")[0], ())
        if not modules:
            continue
        with sync_channel(handle.target, token) as channel:
            for module in modules:
                for service in module.DESCRIPTOR.services_by_name.values():
                    for method in service.methods:
                        request_type = getattr(module, method.input_type.name)
                        call = channel.unary_unary(f"/{service.full_name}/{method.name}", None, None)
                        if not _serves(call):
                            continue  # memory's ingestion half serves only the loop's methods
                        # When a method of a running process is sent bytes that do not parse as its request
                        for what, data in _undecodable(request_type).items():
                            key = f"{name} {method.name} {what}"
                            with pytest.raises(grpc.RpcError) as refused:
                                call(data, timeout=30)
                            outcomes[key] = (refused.value.code(), error_details(refused.value)[1][:1])
                            path = _first_string(request_type.DESCRIPTOR)
                            # Cut short, the outermost length runs past the end: that field is named
                            field = {"noise": "request", "truncated": path[0]}.get(what, ".".join(path))
                            expected[key] = (grpc.StatusCode.INVALID_ARGUMENT, [field])
    # Then every one is INVALID_ARGUMENT naming the field (never gRPC's INTERNAL), and nothing was written
    assert len(outcomes) >= 3 * 20
    assert outcomes == expected
    assert (row_counts(stack.memory_db_url), row_counts(stack.serving_db_url)) == before


def _random_ids(count: int, seed: int = 14) -> list[str]:
    """Seeded random strings from ASCII controls to emoji, without NUL or surrogates (protobuf refuses those)."""
    draw = random.Random(seed)
    ranges = (range(1, 0x80), range(0xA0, 0x250), range(0x2000, 0x2070), range(0x1F600, 0x1F650))
    alphabet = [chr(c) for block in ranges for c in block]
    return ["".join(draw.choice(alphabet) for _ in range(draw.randint(1, 64))) for _ in range(count)]


RANDOM_IDS = [
    *_random_ids(8),
    "1234567812345678123456781234567-8",  # Python's UUID parser takes it, PostgreSQL's does not
    "urn:uuid:12345678-1234-5678-1234-567812345678",
    "{12345678-1234-5678-1234-567812345678}",
    "ünïcødé-\u0131d-😀",
    "' OR 1=1 --",
    "%s%s%s",
    "\u202e\ufeffid",
]


@pytest.mark.parametrize("random_id", RANDOM_IDS)
def test_random_ids_are_not_found_never_internal(stubs: tuple[Stubs, str], random_id: str) -> None:
    s, tenant = stubs
    # When a well-formed but unknown id is given where a record or an event is named
    deleted = s.serving.DeleteContent(
        serving_service_pb2.DeleteContentRequest(tenant=tenant, event_id=random_id, deletion_id=random_id), timeout=30
    )
    with pytest.raises(grpc.RpcError) as supersede:
        s.memory.SupersedeMemory(
            memory_service_pb2.SupersedeMemoryRequest(
                tenant=tenant, memory_id=random_id, text="new text", request_id=random_id
            ),
            timeout=30,
        )
    with pytest.raises(grpc.RpcError) as outbox:
        s.serving.GetOutboxEvent(serving_service_pb2.GetOutboxEventRequest(tenant=tenant, event_id=random_id))
    # Then: nothing to delete, and the lookups are NOT_FOUND or INVALID_ARGUMENT, not INTERNAL
    assert deleted.deleted is False
    assert supersede.value.code() == grpc.StatusCode.NOT_FOUND
    assert outbox.value.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
