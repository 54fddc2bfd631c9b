"""ServingService as a real process on real PostgreSQL: validation, auth, content, redaction at rest.

No relay runs here: everything asserted is what serving itself committed (or refused to).
"""

from __future__ import annotations

import grpc
import pytest

from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from services.common.grpc_errors import error_details
from tests.helpers import random_ref
from tests.integration.serving_relay_support import Stack, alice, alice_request, make_stack, stack

pytestmark = pytest.mark.integration
__all__ = ["make_stack", "stack"]  # fixtures used by this module

_TABLES = ("results", "tool_outcomes", "content_blobs", "outbox")


def _code_and_fields(call: object) -> tuple[grpc.StatusCode, str, list[str]]:
    assert isinstance(call, grpc.RpcError)
    reason, fields = error_details(call)
    return call.code(), reason, fields


def _invalid(request: serving_service_pb2.HandleRequestRequest, mutate: str) -> None:
    if mutate == "no_tenant":
        request.tenant = ""
    elif mutate == "no_user":
        request.user = ""
    elif mutate == "no_request_id":
        request.request_id = ""
    elif mutate == "no_thread":
        request.thread = ""
    elif mutate == "no_route":
        request.route = ""
    elif mutate == "bad_version":
        request.procedure_versions["reply_style"] = "0"
    elif mutate == "text_version":
        request.procedure_versions["reply_style"] = "seven"
    elif mutate == "big_body":
        request.content.body = "x" * (256 * 1024 + 1)
    elif mutate == "big_attachments":
        request.content.attachments.add(
            filename="a.bin", media_type="application/octet-stream", data=b"\0" * (10 * 1024 * 1024 + 1)
        )
    elif mutate == "credential_ref":
        del request.tool_outcomes[:]
        request.tool_outcomes.add(
            tool="web.fetch", status="ok", ref="https://x.example/cb?token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456"
        )
    elif mutate == "credential_thread":
        request.thread = "password=Quokka#2031"
    elif mutate == "too_many_tools":
        del request.tool_outcomes[:]
        request.tool_outcomes.extend(learning_event_pb2.ToolOutcome(tool="t", status="ok") for _ in range(101))


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        ("no_tenant", "tenant"),
        ("no_user", "user"),
        ("no_request_id", "request_id"),
        ("no_thread", "thread"),
        ("no_route", "route"),
        ("bad_version", "procedure_versions[reply_style]"),
        ("text_version", "procedure_versions[reply_style]"),
        ("big_body", "content.body"),
        ("big_attachments", "content.attachments"),
        ("too_many_tools", "tool_outcomes"),
        ("credential_ref", "tool_outcomes[0].ref"),
        ("credential_thread", "thread"),
    ],
)
def test_bad_input_is_invalid_argument_naming_the_field_and_writes_nothing(
    stack: Stack, mutate: str, field: str
) -> None:
    # Given a valid request made invalid in one way, under a service token (so a missing tenant is
    # judged as input, not as permission)
    request = alice_request(0)
    request_id = request.request_id
    _invalid(request, mutate)
    stub = stack.stub(stack.token(tenant="*", roles=("service", "writer")))

    # When it is sent
    with pytest.raises(grpc.RpcError) as failure:
        stub.HandleRequest(request, timeout=30)

    # Then it is INVALID_ARGUMENT naming the field, and nothing at all was written
    code, reason, fields = _code_and_fields(failure.value)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert reason == "INVALID_ARGUMENT"
    assert field in fields
    for table in _TABLES:
        assert stack.query(f"SELECT count(*) FROM {table}")[0][0] == 0, table
    assert stack.count("results", request_id) == 0


def test_no_token_is_unauthenticated_and_another_tenant_is_permission_denied(stack: Stack) -> None:
    # Given a committed request of tenant acme
    committed = stack.stub(stack.token()).HandleRequest(alice_request(0), timeout=30)
    anonymous = stack.stub(None)
    other_tenant = stack.stub(stack.token(tenant="globex"))
    calls = {
        "HandleRequest": alice_request(0),
        "ReadContent": serving_service_pb2.ReadContentRequest(tenant="acme", content_ref=committed.content_ref),
        "BatchReadContent": serving_service_pb2.BatchReadContentRequest(
            tenant="acme", content_refs=[committed.content_ref]
        ),
        "DeleteContent": serving_service_pb2.DeleteContentRequest(
            tenant="acme", content_ref=committed.content_ref, deletion_id=random_ref("del")
        ),
        "GetOutboxEvent": serving_service_pb2.GetOutboxEventRequest(tenant="acme", event_id=committed.event_id),
    }
    for method, request in calls.items():
        # When each RPC is called without a token, then with a token for tenant globex
        with pytest.raises(grpc.RpcError) as no_token:
            getattr(anonymous, method)(request, timeout=10)
        with pytest.raises(grpc.RpcError) as wrong_tenant:
            getattr(other_tenant, method)(request, timeout=10)
        # Then UNAUTHENTICATED, then PERMISSION_DENIED, and the blob is still there
        assert no_token.value.code() == grpc.StatusCode.UNAUTHENTICATED, method
        assert wrong_tenant.value.code() == grpc.StatusCode.PERMISSION_DENIED, method
    assert stack.query("SELECT count(*) FROM results")[0][0] == 1
    assert stack.query("SELECT count(*) FROM content_blobs")[0][0] == 1


def test_read_content_is_redacted_knows_the_owner_and_delete_is_idempotent_with_audit(stack: Stack) -> None:
    # Given Bob's mail (external) with an attachment, and Alice's own instruction
    stub = stack.stub(stack.token())
    external = alice_request(0)
    external.content.attachments.add(filename="agenda.txt", media_type="text/plain", data=b"call +1 415 555 0134")
    from_bob = stub.HandleRequest(external, timeout=30)
    from_alice = stub.HandleRequest(alice_request(1), timeout=30)

    # When the worker-equivalent reads both
    bob_blob = stub.ReadContent(
        serving_service_pb2.ReadContentRequest(tenant="acme", content_ref=from_bob.content_ref), timeout=10
    )
    alice_blob = stub.ReadContent(
        serving_service_pb2.ReadContentRequest(tenant="acme", content_ref=from_alice.content_ref), timeout=10
    )

    # Then the content is redacted, ownership is known, and the attachment is metadata only
    assert "415 555 0134" not in bob_blob.content.body and "[PHONE]" in bob_blob.content.body
    assert "Q1 rollout" in bob_blob.content.body
    assert bob_blob.from_owner is False and alice_blob.from_owner is True
    assert bob_blob.user == "alice"
    [attachment] = bob_blob.content.attachments
    assert attachment.data == b"" and attachment.size_bytes == 20 and len(attachment.sha256) == 64

    # When the deletion workflow deletes the blob twice
    delete = serving_service_pb2.DeleteContentRequest(
        tenant="acme", content_ref=from_bob.content_ref, deletion_id=random_ref("del")
    )
    first, second = stub.DeleteContent(delete, timeout=10), stub.DeleteContent(delete, timeout=10)

    # Then only the first removed it, reading it is NOT_FOUND, and one content-free audit row remains
    assert (first.deleted, second.deleted) == (True, False)
    with pytest.raises(grpc.RpcError) as gone:
        stub.ReadContent(serving_service_pb2.ReadContentRequest(tenant="acme", content_ref=from_bob.content_ref))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    audit = stack.query("SELECT content_ref, deletion_id, existed FROM content_deletions")
    assert audit == [(from_bob.content_ref, delete.deletion_id, True)]


def test_mail_claiming_the_owner_without_a_passing_verdict_is_external_and_says_why(stack: Stack) -> None:
    # Given Alice's own instruction sent again with a forged From: no signature, SPF softfail, DMARC fail
    stub = stack.stub(stack.token())
    forged = alice_request(1)
    forged.sender_authentication.CopyFrom(
        learning_event_pb2.SenderAuthentication(
            authentication_results="mx.acme.example; dkim=none; spf=softfail; dmarc=fail"
        )
    )
    genuine = stub.HandleRequest(alice_request(1), timeout=30)
    response = stub.HandleRequest(forged, timeout=30)

    # When the blob and the outbox event of each are read
    def read(ref: str) -> serving_service_pb2.ReadContentResponse:
        return stub.ReadContent(serving_service_pb2.ReadContentRequest(tenant="acme", content_ref=ref), timeout=10)

    def event(event_id: str) -> learning_event_pb2.LearningEvent:
        request = serving_service_pb2.GetOutboxEventRequest(tenant="acme", event_id=event_id)
        return stub.GetOutboxEvent(request, timeout=10).event

    forged_event, genuine_event = event(response.event_id), event(genuine.event_id)

    # Then only the authenticated mail is the owner's, and the forged one's event keeps its verdict and reason
    assert read(response.content_ref).from_owner is False and read(genuine.content_ref).from_owner is True
    assert forged_event.owner_claim == learning_event_pb2.OWNER_CLAIM_UNVERIFIED
    assert forged_event.sender_authentication.dmarc == learning_event_pb2.AUTHENTICATION_RESULT_FAIL
    assert "dmarc=fail dkim=none spf=softfail" in forged_event.owner_claim_reason
    assert genuine_event.owner_claim == learning_event_pb2.OWNER_CLAIM_VERIFIED


def test_fixture_phone_and_password_never_reach_servings_database(stack: Stack) -> None:
    # Given every request of the Alice fixture, handled
    stub = stack.stub(stack.token())
    for index in range(len(alice()["requests"])):
        stub.HandleRequest(alice_request(index), timeout=30)
    forbidden = [s for case in alice()["requests"] for s in case.get("expect", {}).get("never_stored_anywhere", [])]
    assert "Tr0ub4dor&3" in forbidden and "415 555 0134" in forbidden

    # When every text, json and bytea column of every table is dumped
    columns = stack.query(
        """
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'bytea', 'character varying')
        """
    )
    dump = []
    for table, column in columns:
        for (value,) in stack.query(f'SELECT "{column}"::text FROM "{table}"'):
            dump.append(bytes.fromhex(value[2:]).decode("utf-8", "replace") if str(value).startswith("\\x") else value)
    text = "\n".join(str(v) for v in dump)

    # Then the requests are there, and none of the forbidden strings is
    assert "Q1 rollout" in text
    for secret in forbidden:
        assert secret not in text
