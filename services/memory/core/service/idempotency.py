"""Request-id replay, one rule for every memory command that takes a `request_id` (AIP-155).

A command's fingerprint covers every field of the command except those that only name the call
(`request_id` itself, `trace_id`), so a repeat is recognised as a repeat only when it asks for the
very same thing: same target, same text, same reason, same caller. A repeat returns the first
call's recorded result and writes nothing; the same id with any other content is refused with
`RequestIdReused`, never silently answered with the first result. Lifecycle (SupersedeMemory),
learned procedures (SaveLearnedProcedure) and deletion (Forget) all go through here.

The ledger is the unit of work's `requests` repository, so the record is written in the same
transaction as the change it stands for: a crash leaves both or neither.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, is_dataclass
from typing import Any, Protocol

from services.memory.core.domain.errors import RequestIdReused

NOT_CONTENT = ("request_id", "trace_id")
"""Fields that name a call rather than say what it asks for; every other field is fingerprinted."""


class RequestLedger(Protocol):
    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None: ...
    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None: ...


def fingerprint(command: object, *, ignore: Iterable[str] = NOT_CONTENT) -> str:
    """A stable digest of a dataclass command's content (enums by value, nested dataclasses by field)."""
    if not is_dataclass(command) or isinstance(command, type):
        raise TypeError(f"a command must be a dataclass instance, not {type(command).__name__}")
    skipped = set(ignore)
    fields = {name: value for name, value in asdict(command).items() if name not in skipped}
    encoded = json.dumps(fields, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def replayed(ledger: RequestLedger, request_id: str, *, operation: str, fingerprint: str) -> dict[str, Any] | None:
    """The first call's recorded result when `request_id` was already used for this very command,
    None when it is new. Raises RequestIdReused when it was used for another operation or content."""
    prior = ledger.get(request_id)
    if prior is None:
        return None
    recorded_operation, result = prior
    if recorded_operation != operation or result.get("fingerprint") != fingerprint:
        raise RequestIdReused(f"request_id {request_id!r} was used for another change")
    return result


def remember(
    ledger: RequestLedger, request_id: str, *, operation: str, fingerprint: str, result: dict[str, Any]
) -> None:
    """Record the first call's result with its fingerprint, in the caller's transaction."""
    ledger.record(request_id, operation=operation, result={**result, "fingerprint": fingerprint})
