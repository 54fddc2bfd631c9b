"""Request-id replay is one rule for every memory command: the whole command is fingerprinted, so a
repeat returns the first result and the same id with any other content is refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from services.memory.core.domain.errors import RequestIdReused
from services.memory.core.service.idempotency import fingerprint, remember, replayed
from services.memory.core.service.lifecycle import SupersedeMemory
from services.memory.deletion.domain.deletion import ForgetScope
from services.memory.deletion.service.forget import Forget
from services.memory.procedures.domain.procedures import ProcedureKind, ProcedureSource, SaveProcedure


class Ledger:
    """The `requests` repository's contract: one recorded (operation, result) per request id."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, dict[str, Any]]] = {}

    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        return self.rows.get(request_id)

    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None:
        self.rows[request_id] = (operation, result)


SUPERSEDE = SupersedeMemory("acme", "m-1", "tea", "req-1", "typo", "ops", trace_id="t-1")
FORGET = Forget("acme", ForgetScope.MEMORY, "dpo", memory_id="m-1", request_id="req-2", reason="asked")
SAVE = SaveProcedure(
    tenant="acme",
    intent_key="kyc.bank_statements",
    title="Bank statements",
    kind=ProcedureKind.SUBSTANTIVE,
    scope="kyc",
    trigger="new client",
    action="request 3 months of bank statements",
    details={},
    created_by="officer",
    source=ProcedureSource.OFFICER_TEACHING,
)


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        (SUPERSEDE, replace(SUPERSEDE, text="coffee")),  # the lifecycle check used to ignore a changed text
        (SUPERSEDE, replace(SUPERSEDE, reason="other")),
        (FORGET, replace(FORGET, memory_id="m-2")),
        (FORGET, replace(FORGET, reason="another reason")),
        (SAVE, replace(SAVE, action="request 6 months of bank statements")),
    ],
)
def test_a_request_id_reused_with_other_content_is_refused(command: object, changed: object) -> None:
    # Given: a first call recorded under its request id
    ledger = Ledger()
    remember(ledger, "req", operation="op", fingerprint=fingerprint(command), result={"id": "first"})
    # When / Then: the same content is a repeat that returns the first result ...
    assert replayed(ledger, "req", operation="op", fingerprint=fingerprint(command)) == {
        "id": "first",
        "fingerprint": fingerprint(command),
    }
    # ... and any other content under the same id is refused
    with pytest.raises(RequestIdReused):
        replayed(ledger, "req", operation="op", fingerprint=fingerprint(changed))


def test_the_trace_id_and_the_request_id_are_not_content() -> None:
    # Given: the same supersession retried under another trace (a client retry opens a new span)
    retried = replace(SUPERSEDE, trace_id="t-2")
    # Then: it is the same command
    assert fingerprint(retried) == fingerprint(SUPERSEDE)


def test_a_request_id_used_for_another_operation_is_refused() -> None:
    # Given: an id recorded by a supersession
    ledger = Ledger()
    remember(ledger, "req", operation="memory.supersede", fingerprint=fingerprint(SUPERSEDE), result={})
    # When / Then: a Forget reusing it is refused even with a matching fingerprint
    with pytest.raises(RequestIdReused):
        replayed(ledger, "req", operation="memory.forget", fingerprint=fingerprint(SUPERSEDE))


def test_a_new_request_id_is_not_a_repeat() -> None:
    assert replayed(Ledger(), "fresh", operation="op", fingerprint=fingerprint(FORGET)) is None
