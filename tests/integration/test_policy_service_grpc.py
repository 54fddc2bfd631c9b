"""The policy service as a real process: Evaluate over gRPC on the Alice fixture's candidates.

The candidates are the ones the worker would send: the fixture's content, redacted in thorough
mode and run through the rule-based extractor.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from services.common import convert, decision_batch
from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import candidate_pb2, policy_service_pb2, policy_service_pb2_grpc
from services.common.grpc_errors import error_details
from services.common.infra.processes import free_port
from services.common.redaction import RedactionMode, Redactor
from services.common.vocabulary import Candidate
from services.policy.domain.rules import POLICY_VERSION
from services.worker.domain.extraction import EmailContent, ExtractionInput, RuleBasedExtractor, ToolOutcome
from tests.fixtures import load_fixture
from tests.helpers import POLICY_KEY_ENV, POLICY_SIGNER, SpawnService, random_ref

pytestmark = pytest.mark.integration

FIXTURE = load_fixture("alice.json")
TENANT, USER = FIXTURE["tenant"], FIXTURE["user"]


def _candidates(name: str) -> list[Candidate]:
    request = next(r for r in FIXTURE["requests"] if r["name"] == name)
    redact = Redactor(RedactionMode.THOROUGH).redact
    content = request["content"]
    return RuleBasedExtractor().extract(
        ExtractionInput(
            event_id=random_ref("evt"),
            trace_id=secrets.token_hex(16),
            tenant=TENANT,
            user=USER,
            route=request["route"],
            tool_outcomes=tuple(
                ToolOutcome(t["tool"], t["status"], t["ref"], redact(t["summary"]).text)
                for t in request["tool_outcomes"]
            ),
            email=EmailContent(
                redact(content["from"]).text,
                redact(content["to"]).text,
                redact(content["subject"]).text,
                redact(content["body"]).text,
            ),
            from_owner=content["from"] == FIXTURE["owner_address"],
        )
    )


class Policy:
    """A running policy process and a way to call it with a chosen token."""

    def __init__(self, target: str, secret: SigningKey) -> None:
        self._target = target
        self._secret = secret
        self._channel = grpc.insecure_channel(target)
        self.stub = policy_service_pb2_grpc.PolicyServiceStub(self._channel)

    def token(self, tenant: str = "*", roles: tuple[str, ...] = ("service",)) -> tuple[tuple[str, str | bytes], ...]:
        return (("authorization", f"Bearer {issue_token(self._secret, subject='test', tenant=tenant, roles=roles)}"),)

    def evaluate(
        self, candidate: Candidate, conflicts: list[policy_service_pb2.ConflictingRecord] | None = None, **kw: Any
    ) -> policy_service_pb2.EvaluateResponse:
        request = policy_service_pb2.EvaluateRequest(
            candidate=convert.candidate_to_pb(candidate),
            conflicts=conflicts or [],
            context=policy_service_pb2.EvaluationContext(tenant=TENANT, user=USER, route="test"),
        )
        response: policy_service_pb2.EvaluateResponse = self.stub.Evaluate(
            request, metadata=kw.get("metadata", self.token()), timeout=10
        )
        return response

    def close(self) -> None:
        self._channel.close()


@pytest.fixture
def policy(spawn: SpawnService) -> Iterator[Policy]:
    port, secret = free_port(), SigningKey.generate()
    env = {
        "MEMLOOP_AUTH_PUBLIC_KEYS": secret.public_pem(),
        "MEMLOOP_GRPC_PORT": str(port),
        "MEMLOOP_METRICS_PORT": str(free_port()),
        "MEMLOOP_POLICY_SIGNING_KEY": POLICY_KEY_ENV["MEMLOOP_POLICY_SIGNING_KEY"],
    }
    spawn("services.policy.entrypoints.main", env, port, "policy")
    client = Policy(f"127.0.0.1:{port}", secret)
    yield client
    client.close()


def _codes(response: policy_service_pb2.EvaluateResponse) -> list[str]:
    return [reason.code for reason in response.decision.reasons]


def test_bob_email_episode_is_stored_and_the_ps_is_rejected_as_external_procedural(policy: Policy) -> None:
    # Given the candidates of Alice's scheduling request with Bob's P.S.
    candidates = _candidates("schedule-with-bob")
    episode = next(c for c in candidates if c.type.value == "episode")
    injected = next(c for c in candidates if c.origin.value == "external_email")

    # When the policy service evaluates each
    stored, rejected = policy.evaluate(episode), policy.evaluate(injected)

    # Then the episode is stored and the injected procedure rejected, with reasons and the version
    assert stored.decision.outcome == candidate_pb2.DECISION_OUTCOME_STORE
    assert rejected.decision.outcome == candidate_pb2.DECISION_OUTCOME_REJECT
    assert "EXTERNAL_PROCEDURAL" in _codes(rejected)
    assert {stored.decision.policy_version, rejected.decision.policy_version} == {POLICY_VERSION}
    assert rejected.decision.candidate.candidate_key == injected.candidate_key


def test_preference_update_supersedes_and_the_secret_is_rejected(policy: Policy) -> None:
    # Given Alice's 10:00 preference is active, and her 09:00 update and VPN mail as candidates
    (after_ten,) = _candidates("preference-after-ten")
    (after_nine,) = _candidates("preference-after-nine")
    secret_candidates = _candidates("secret-in-mail")
    active = policy_service_pb2.ConflictingRecord(
        memory_id="mem-ten",
        intent_key=after_ten.intent_key,
        text=after_ten.text,
        type=candidate_pb2.MEMORY_TYPE_PREFERENCE,
    )

    # When each is evaluated (the update with the active record as its conflict)
    first = policy.evaluate(after_ten)
    update = policy.evaluate(after_nine, [active])
    secrets_ = [policy.evaluate(c) for c in secret_candidates]

    # Then the first is stored, the update supersedes, and nothing of the secret mail is stored
    assert first.decision.outcome == candidate_pb2.DECISION_OUTCOME_STORE
    assert update.decision.outcome == candidate_pb2.DECISION_OUTCOME_STORE
    assert _codes(update) == ["SUPERSEDES_SAME_INTENT"]
    assert secrets_ and all(r.decision.outcome == candidate_pb2.DECISION_OUTCOME_REJECT for r in secrets_)


def test_an_owner_statement_of_a_special_category_waits_for_review_naming_it(policy: Policy) -> None:
    # Given Alice's own mails stating a health condition and a faith, as the worker extracts them
    statements = {
        "health": "I prefer no sweets at the offsite since I have diabetes.",
        "religion or belief": "Je suis musulmane, je préfère pas de porc aux dîners clients.",
    }
    for category, body in statements.items():
        (candidate,) = RuleBasedExtractor().extract(
            ExtractionInput(
                random_ref("evt"), secrets.token_hex(16), TENANT, USER, "assistant.instruction", (),
                EmailContent("alice@example.com", "assistant@example.com", "", body), True,
            )
        )  # fmt: skip
        # When the policy process evaluates it
        response = policy.evaluate(candidate)
        # Then a person approves it first, and the reason names the category
        assert response.decision.outcome == candidate_pb2.DECISION_OUTCOME_REVIEW
        assert "SPECIAL_CATEGORY" in _codes(response)
        assert any(category in reason.message for reason in response.decision.reasons)


def test_only_the_loop_may_evaluate_and_only_for_its_tenant(policy: Policy) -> None:
    # Given one candidate, and tokens: the loop's for the tenant, the loop's for another tenant,
    # an agent's (writer) for the same tenant, and none
    (candidate,) = _candidates("preference-after-ten")

    # When each evaluates it
    own = policy.evaluate(candidate, metadata=policy.token(TENANT, ("service",)))
    with pytest.raises(grpc.RpcError) as other:
        policy.evaluate(candidate, metadata=policy.token("globex", ("service",)))
    with pytest.raises(grpc.RpcError) as agent:
        policy.evaluate(candidate, metadata=policy.token(TENANT, ("writer",)))
    with pytest.raises(grpc.RpcError) as anonymous:
        policy.evaluate(candidate, metadata=())

    # Then only the loop's identity for that tenant gets a (signed) decision
    assert own.decision.outcome == candidate_pb2.DECISION_OUTCOME_STORE
    assert other.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert agent.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_an_invalid_candidate_is_invalid_argument_naming_the_field(policy: Policy) -> None:
    # Given a candidate with an unspecified type
    request = policy_service_pb2.EvaluateRequest(
        candidate=candidate_pb2.Candidate(candidate_key="k", origin=candidate_pb2.ORIGIN_OWNER, confidence=0.9),
        context=policy_service_pb2.EvaluationContext(tenant=TENANT, user=USER),
    )

    # When it is evaluated
    with pytest.raises(grpc.RpcError) as failure:
        policy.stub.Evaluate(request, metadata=policy.token(), timeout=10)

    # Then the call fails as INVALID_ARGUMENT with the field named
    assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_details(failure.value) == ("INVALID_ARGUMENT", ["candidate.type"])


def test_a_batch_decides_like_one_call_each_and_every_decision_verifies_for_its_own_user_and_event(
    policy: Policy,
) -> None:
    # Given the candidates of two of Alice's mails, one of them for another user of the tenant
    bob_mail, secret_mail = _candidates("schedule-with-bob"), _candidates("secret-in-mail")
    items = [(c, USER) for c in bob_mail] + [(c, "carol") for c in secret_mail]
    request = policy_service_pb2.BatchEvaluateRequest(
        tenant=TENANT,
        requests=[
            policy_service_pb2.EvaluateRequest(
                candidate=convert.candidate_to_pb(c), context=policy_service_pb2.EvaluationContext(user=user)
            )
            for c, user in items
        ],
    )

    # When they are evaluated in one batch, and one by one
    batch = policy.stub.BatchEvaluate(request, metadata=policy.token(), timeout=10)
    alone = [policy.evaluate(c).decision for c in bob_mail]

    # Then there is one decision per request, in order, with the outcome the single call gives
    assert [r.decision.candidate.candidate_key for r in batch.responses] == [c.candidate_key for c, _ in items]
    assert [r.decision.outcome for r in batch.responses[: len(bob_mail)]] == [d.outcome for d in alone]
    # And each is signed for its own user and event, as memory verifies it (and for no other user)
    verifier = POLICY_SIGNER.verifier()
    for response, (candidate, user) in zip(batch.responses, items, strict=True):
        decision = convert.decision_from_pb(response.decision)
        assert verifier.verify(decision, tenant=TENANT, user=user, event_id=candidate.event_id)
        other = "carol" if user == USER else USER
        assert not verifier.verify(decision, tenant=TENANT, user=other, event_id=candidate.event_id)
    # And the batch was signed once: every decision's proof carries the same root signature
    proofs = [decision_batch.decode_proof(r.decision.signature) for r in batch.responses]
    assert len({proof[0] for proof in proofs if proof is not None}) == 1
    assert None not in proofs


def test_a_batch_item_for_another_tenant_or_invalid_fails_the_call_naming_it(policy: Policy) -> None:
    # Given a batch whose second request names another tenant, and one whose second candidate is invalid
    (candidate,) = _candidates("preference-after-ten")
    good = policy_service_pb2.EvaluateRequest(
        candidate=convert.candidate_to_pb(candidate), context=policy_service_pb2.EvaluationContext(user=USER)
    )
    foreign = policy_service_pb2.EvaluateRequest()
    foreign.CopyFrom(good)
    foreign.context.tenant = "globex"
    invalid = policy_service_pb2.EvaluateRequest(
        candidate=candidate_pb2.Candidate(candidate_key="k", origin=candidate_pb2.ORIGIN_OWNER, confidence=0.9),
        context=policy_service_pb2.EvaluationContext(user=USER),
    )

    # When each batch is evaluated, and a tenant's batch is sent with another tenant's loop token
    failures = []
    for second in (foreign, invalid):
        with pytest.raises(grpc.RpcError) as failure:
            policy.stub.BatchEvaluate(
                policy_service_pb2.BatchEvaluateRequest(tenant=TENANT, requests=[good, second]),
                metadata=policy.token(),
                timeout=10,
            )
        failures.append(failure.value)
    with pytest.raises(grpc.RpcError) as denied:
        policy.stub.BatchEvaluate(
            policy_service_pb2.BatchEvaluateRequest(tenant=TENANT, requests=[good]),
            metadata=policy.token("globex", ("service",)),
            timeout=10,
        )

    # Then the whole call is INVALID_ARGUMENT naming the request and field, or PERMISSION_DENIED
    assert [f.code() for f in failures] == [grpc.StatusCode.INVALID_ARGUMENT] * 2
    assert error_details(failures[0]) == ("INVALID_ARGUMENT", ["requests[1].context.tenant"])
    assert error_details(failures[1]) == ("INVALID_ARGUMENT", ["requests[1].candidate.type"])
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
