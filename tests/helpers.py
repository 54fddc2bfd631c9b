"""Small helpers shared by every test suite; importable (`from tests.helpers import ...`), unlike conftest."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from services.common.decision_signing import generate_private_key_pem, load_signer, public_key_pem
from services.common.infra.nats import EmbeddedNats
from services.common.infra.processes import ServiceProcess
from services.common.pii.model import FindingKind
from services.common.redaction import RedactionMode, Redactor
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Sensitivity, candidate_key
from services.policy.domain.rules import EvaluationContext, ReasonCode, evaluate
from services.worker.domain.extraction import EmailContent, ExtractionInput, RuleBasedExtractor, ToolOutcome

_CONTEXT = EvaluationContext("acme", "alice", "assistant.instruction")


def owner_candidate(text: str, memory_type: MemoryType = MemoryType.PREFERENCE, **fields: Any) -> Candidate:
    """A confident candidate of Alice's in tenant acme, of normal sensitivity; ``fields`` override."""
    base = Candidate(
        candidate_key=candidate_key("acme", "alice", memory_type, text),
        type=memory_type,
        origin=Origin.OWNER,
        sensitivity=Sensitivity.NORMAL,
        confidence=0.93,
        text=text,
        event_id="evt-1",
        trace_id="0" * 32,
    )
    return replace(base, **fields)


def assert_value_replaced(mode: RedactionMode, text: str, kind: FindingKind, value: str) -> None:
    """The redaction tables' one check: ``value`` is gone from ``text`` and its kind's placeholder stands there."""
    result = Redactor(mode).redact(text)
    assert value not in result.text
    assert kind in result.kinds
    assert kind.placeholder in result.text


def tool_outcome_event(summary: str) -> ExtractionInput:
    """An event of Alice's whose one tool outcome (a page fetched) reported ``summary``."""
    outcome = ToolOutcome("web.fetch", "ok", "ref-1", summary)
    return ExtractionInput("evt-1", "0" * 32, "acme", "alice", "assistant.instruction", (outcome,), None, False)


def owner_mail_event(body: str) -> ExtractionInput:
    """An event of Alice's: a note she mailed herself, its addresses already redacted as serving does."""
    email = EmailContent("[EMAIL@acme.example]", "[EMAIL@acme.example]", "note", body)
    return ExtractionInput("evt-1", "0" * 32, "acme", "alice", "assistant.instruction", email=email, from_owner=True)


def outsider_mail_event(body: str) -> ExtractionInput:
    """An event of Alice's: a mail an outsider (vendor.example) sent her, its addresses redacted as serving does."""
    email = EmailContent("[EMAIL@vendor.example]", "[EMAIL@acme.example]", "Hello", body)
    return ExtractionInput("evt-1", "0" * 32, "acme", "alice", "assistant.instruction", email=email, from_owner=False)


def decisions_on_tool_outcome(summary: str) -> list[Decision]:
    """Policy's decisions on what the rules extractor proposes from a tool outcome reporting ``summary``."""
    proposals = RuleBasedExtractor().extract(tool_outcome_event(summary))
    assert proposals, "the extractor proposed nothing: the test would show nothing"
    return [evaluate(proposal, (), _CONTEXT) for proposal in proposals]


def assert_tool_outcome_held(summary: str) -> None:
    """Nothing of the tool outcome is stored; what waits for a person says it is an untrusted instruction."""
    for decision in decisions_on_tool_outcome(summary):
        assert decision.outcome is not Outcome.STORE
        if decision.outcome is Outcome.REVIEW:
            assert ReasonCode.UNTRUSTED_INSTRUCTION in [reason.code for reason in decision.reasons]


def assert_outsider_fact_refused(text: str) -> None:
    """``text`` as a fact an outsider's mail gave is refused as an instruction."""
    decision = evaluate(owner_candidate(text, MemoryType.FACT, origin=Origin.EXTERNAL_EMAIL), (), _CONTEXT)
    assert decision.outcome is Outcome.REJECT
    assert ReasonCode.EXTERNAL_INSTRUCTION in [reason.code for reason in decision.reasons]


def random_ref(prefix: str) -> str:
    """A fresh id such as `evt-1f3a9c0d2b4e`, so tests never collide and never need cleanup."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class TestInfra:
    """The servers a test session runs against (the `infra` fixture).

    `external` is True when the environment named the servers (CI's second pass against the
    machine's PostgreSQL and NATS); then `embedded_nats` is None and NATS cannot be stopped by a
    test, so outage tests start their own `EmbeddedNats`. `nats_monitor_url` is the HTTP monitoring
    endpoint when known (always for the embedded server).
    """

    __test__: ClassVar[bool] = False  # a dataclass named Test*: not a test class for pytest

    admin_db_url: str
    nats_url: str
    nats_monitor_url: str | None
    embedded_nats: EmbeddedNats | None
    external: bool


SpawnService = Callable[[str, dict[str, str], int, str], ServiceProcess]
"""The `spawn` fixture: `(module, env, port, name) -> ServiceProcess`, already SERVING."""


# Policy's signing key pair for this test session: policy processes sign with it, memory processes
# verify with its public half, and tests that play the worker sign their own decisions with it.
POLICY_SIGNING_PEM = generate_private_key_pem()
POLICY_VERIFY_PEM = public_key_pem(POLICY_SIGNING_PEM)
POLICY_SIGNER = load_signer(POLICY_SIGNING_PEM.decode())
POLICY_KEY_ENV = {
    "MEMLOOP_POLICY_SIGNING_KEY": POLICY_SIGNING_PEM.decode(),
    "MEMLOOP_POLICY_VERIFY_KEY": POLICY_VERIFY_PEM.decode(),
}


def sign_decisions(request: Any) -> Any:
    """Sign every decision of an ApplyLearningRequest as policy would; returns the request.

    A decision that is not even valid input stays unsigned: memory must refuse it as
    INVALID_ARGUMENT (naming the field) before it looks at any signature.
    """
    from services.common import convert
    from services.common.errors import InvalidArgument

    for message in request.decisions:
        try:
            decision = convert.decision_from_pb(message)
        except InvalidArgument:
            continue
        message.signature = POLICY_SIGNER.sign(
            decision, tenant=request.tenant, user=request.user, event_id=request.event_id
        )
    return request
