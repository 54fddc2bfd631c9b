"""Owner trust needs a verified sender: the verdict is parsed, judged, stored, and carried to the worker."""

from __future__ import annotations

import pytest

from services.common.errors import InvalidArgument
from services.common.gen.memloop.v1 import learning_event_pb2, serving_service_pb2
from services.common.redaction import Redactor
from services.serving.adapters.in_memory import InMemoryServingStore
from services.serving.domain.model import Email, HandleRequestCommand
from services.serving.domain.sender import (
    AuthResult,
    OwnerClaim,
    SenderAuthentication,
    judge_owner_claim,
    parse_authentication_results,
)
from services.serving.entrypoints.convert import to_command
from services.serving.service import use_cases
from services.serving.service.use_cases import ServingDeps
from services.worker.entrypoints.messages import parse_learning_event

OWNER = "alice@acme.example"
PASS_HEADER = "mx.acme.example; dkim=pass header.d=acme.example; spf=pass smtp.mailfrom=acme.example; dmarc=pass"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (PASS_HEADER, SenderAuthentication(AuthResult.PASS, AuthResult.PASS, AuthResult.PASS, "acme.example")),
        (
            "mx.example; spf=softfail smtp.mailfrom=acme.example; dkim=none; dmarc=fail (p=reject) header.from=x",
            SenderAuthentication(AuthResult.FAIL, AuthResult.NONE, AuthResult.SOFTFAIL, "", dmarc_domain="x"),
        ),
        (  # two signatures: the passing one (and its domain) wins
            "mx; DKIM=fail header.d=evil.example; dkim=pass header.d=mail.acme.example header.s=s1; SPF=none",
            SenderAuthentication(AuthResult.UNSPECIFIED, AuthResult.PASS, AuthResult.NONE, "mail.acme.example"),
        ),
        ("mx.example; arc=pass; dkim=bogus; iprev=pass", SenderAuthentication()),
        ("", SenderAuthentication()),
        # Comments and quoted strings hold no results; neither does the service id before the first ";".
        ("mx.example; dmarc=none (dmarc=pass header.from=acme.example)", SenderAuthentication(AuthResult.NONE)),
        ('mx.example; dmarc=none; x-note="dmarc=pass"; dkim=neutral', SenderAuthentication(AuthResult.NONE,
                                                                                           AuthResult.NEUTRAL)),
        ("dmarc=pass.example; dmarc=fail", SenderAuthentication(AuthResult.FAIL)),
        # One message, one DMARC verdict: a second that disagrees was added by someone, and the failure stands.
        ("mx.example; dmarc=pass header.from=acme.example; dmarc=fail header.from=acme.example",
         SenderAuthentication(AuthResult.FAIL, dmarc_domain="acme.example")),
        ("mx.example; dmarc=fail header.from=acme.example; dmarc=pass header.from=acme.example",
         SenderAuthentication(AuthResult.FAIL, dmarc_domain="acme.example")),
        # A client may send the results without the service id.
        ("dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example",
         SenderAuthentication(AuthResult.PASS, AuthResult.PASS, dkim_domain="acme.example",
                              dmarc_domain="acme.example")),
    ],
)  # fmt: skip
def test_authentication_results_headers_are_parsed(header: str, expected: SenderAuthentication) -> None:
    # Given an Authentication-Results header  When parsed  Then DMARC, DKIM and SPF results are read
    assert parse_authentication_results(header) == expected


@pytest.mark.parametrize(
    ("sender", "auth", "claim"),
    [
        (OWNER, SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.VERIFIED),
        ('"Alice" <Alice@ACME.example>', SenderAuthentication(dkim=AuthResult.PASS, dkim_domain="acme.example"),
         OwnerClaim.VERIFIED),
        (OWNER, SenderAuthentication(dkim=AuthResult.PASS, dkim_domain="evil.example"), OwnerClaim.UNVERIFIED),
        (OWNER, SenderAuthentication(dkim=AuthResult.PASS, dkim_domain="example"), OwnerClaim.UNVERIFIED),
        (OWNER, SenderAuthentication(spf=AuthResult.PASS), OwnerClaim.UNVERIFIED),  # SPF vouches for the envelope
        (OWNER, SenderAuthentication(dmarc=AuthResult.FAIL, dkim=AuthResult.PASS, dkim_domain="evil.example"),
         OwnerClaim.UNVERIFIED),
        (OWNER, SenderAuthentication(), OwnerClaim.UNVERIFIED),  # no verdict: a forged From looks like this
        ("bob@partner.example", SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        # DMARC passed, but for another From domain than the one compared with the owner's.
        (OWNER, SenderAuthentication(dmarc=AuthResult.PASS, dmarc_domain="evil.example"), OwnerClaim.UNVERIFIED),
        (OWNER, SenderAuthentication(dmarc=AuthResult.PASS, dmarc_domain="acme.example"), OwnerClaim.VERIFIED),
        # From values that name two addresses: parsers disagree on which is the sender, so neither is the owner.
        (f"{OWNER} <mallory@evil.example>", SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        (f"<{OWNER}>mallory@evil.example", SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        (f"mallory@evil.example, {OWNER}", SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        (f"{OWNER}\n<mallory@evil.example>", SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        # An address in the display name or a comment is not the sender's address.
        (f'"{OWNER}" <mallory@evil.example>', SenderAuthentication(dmarc=AuthResult.PASS), OwnerClaim.NOT_OWNER),
        (f"{OWNER} (sent for mallory@evil.example)", SenderAuthentication(dmarc=AuthResult.PASS),
         OwnerClaim.VERIFIED),
    ],
)  # fmt: skip
def test_only_an_authenticated_owner_address_is_the_owner(
    sender: str, auth: SenderAuthentication, claim: OwnerClaim
) -> None:
    # Given a sender and the mail system's verdict  When the owner claim is judged
    judged, reason = judge_owner_claim(sender, OWNER, "assistant@acme.example", auth)
    # Then only a passing, aligned verdict makes the owner; an unverified claim says why
    assert judged is claim
    assert (reason != "") is (claim is OwnerClaim.UNVERIFIED)
    if reason:
        assert auth.summary() in reason and "@" not in reason


def _deps() -> tuple[InMemoryServingStore, ServingDeps]:
    store = InMemoryServingStore()
    redactor = Redactor()
    return store, ServingDeps(uow_factory=store.unit_of_work, redact=lambda text: redactor.redact(text).text)


def _owner_mail(request_id: str, auth: SenderAuthentication) -> HandleRequestCommand:
    return HandleRequestCommand(
        request_id=request_id, tenant="acme", user="alice", thread="t", route="assistant.instruction",
        procedure_versions={}, tool_outcomes=(), feedback_ref="",
        content=Email(OWNER, "assistant@acme.example", "note to self", "I prefer meetings after 10:00."),
        attachments=(), reply="Noted.", owner_address=OWNER, sender_authentication=auth,
    )  # fmt: skip


def test_a_forged_note_to_self_is_stored_as_external_with_its_reason_in_the_event() -> None:
    # Given two mails from the owner's address: one authenticated, one with no passing verdict
    store, deps = _deps()
    verified = use_cases.handle_request(_owner_mail("req-ok", parse_authentication_results(PASS_HEADER)), deps)
    forged = use_cases.handle_request(
        _owner_mail("req-forged", SenderAuthentication(spf=AuthResult.PASS, dmarc=AuthResult.FAIL)), deps
    )
    # When the stored blobs and the outbox events are read (the event as the worker parses it)
    blobs = store.tables.contents
    events = {event_id: parse_learning_event(payload) for event_id, (_, _, payload) in store.tables.outbox.items()}
    # Then only the authenticated mail is the owner's; the forged one is external, its verdict and reason kept
    assert blobs[verified.content_ref].from_owner is True
    assert blobs[forged.content_ref].from_owner is False
    ok, bad = events[verified.event_id].sender, events[forged.event_id].sender
    assert ok is not None and (ok.owner_claim, ok.dmarc, ok.owner_claim_reason) == ("verified", "pass", "")
    assert bad is not None and (bad.owner_claim, bad.dmarc, bad.spf) == ("unverified", "fail", "pass")
    assert "without a passing sender verdict" in bad.owner_claim_reason


def _request(**auth: object) -> serving_service_pb2.HandleRequestRequest:
    request = serving_service_pb2.HandleRequestRequest(request_id="r", tenant="acme", user="alice")
    request.sender_authentication.CopyFrom(learning_event_pb2.SenderAuthentication(**auth))  # type: ignore[arg-type]
    return request


def test_the_serving_request_takes_results_or_a_raw_header_and_refuses_bad_values() -> None:
    # Given requests carrying results, a raw header, an unknown enum value and an oversized header
    # When converted  Then results win, a header is parsed when no result is given, bad input names its field
    results = to_command(_request(dmarc=learning_event_pb2.AUTHENTICATION_RESULT_PASS), trace_id="", span_id="")
    assert results.sender_authentication.dmarc is AuthResult.PASS
    header = to_command(_request(authentication_results=PASS_HEADER), trace_id="", span_id="")
    assert header.sender_authentication.dkim_domain == "acme.example"
    with pytest.raises(InvalidArgument) as unknown:
        to_command(_request(dkim=42), trace_id="", span_id="")
    assert unknown.value.violations[0].field == "sender_authentication.dkim"
    with pytest.raises(InvalidArgument) as long:
        to_command(_request(authentication_results="x" * 9000), trace_id="", span_id="")
    assert long.value.violations[0].field == "sender_authentication.authentication_results"
