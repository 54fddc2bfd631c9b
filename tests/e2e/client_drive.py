"""Drive the whole stack with memloop-client alone: run by test_client_venv.py with the python of a
fresh venv that has only memloop-client (and grpcio, protobuf) installed, never the services.

Reads MEMLOOP_SERVING_TARGET, MEMLOOP_MEMORY_TARGET, MEMLOOP_TENANT and MEMLOOP_TOKEN_FILE (the
token callback reads it, so a test could rotate it); prints one JSON line of what it observed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import TypedDict

from memloop_client import CONTRACT_VERSION, AsyncClient, Client, Email, InvalidArgument

USER, OWNER, QUERY = "alice", "alice@acme.example", "When can I book meetings with Alice?"
AUTH = "mx.acme.example; dkim=pass header.d=acme.example; spf=pass smtp.mailfrom=acme.example; dmarc=pass"
MAIL = Email(OWNER, "assistant@acme.example", "Scheduling", "Please keep my meetings after 10:00.", AUTH)


class Targets(TypedDict):
    """Where the stack listens, as the clients' keyword arguments (typed so `**` keeps the names checked)."""

    serving: str
    memory: str
    tenant: str


def main() -> None:
    if importlib.util.find_spec("services") is not None:
        sys.exit("the services package is importable here; this must run without it")
    token_file = Path(os.environ["MEMLOOP_TOKEN_FILE"])
    settings: Targets = {
        "serving": os.environ["MEMLOOP_SERVING_TARGET"],
        "memory": os.environ["MEMLOOP_MEMORY_TARGET"],
        "tenant": os.environ["MEMLOOP_TENANT"],
    }
    report: dict[str, object] = {"contract": CONTRACT_VERSION}
    with Client(**settings, token=lambda: token_file.read_text().strip()) as memloop:
        try:
            memloop.record(USER, thread="", route="assistant.instruction", reply="x", email=MAIL)
        except InvalidArgument as exc:
            report["invalid_field"], report["invalid_reason"] = exc.field, exc.reason
        before = memloop.context(USER, QUERY, k=5)
        result = memloop.record(
            USER,
            thread=f"thr-{uuid.uuid4().hex[:8]}",
            route="assistant.instruction",
            reply="Noted: meetings after 10:00.",
            email=MAIL,
            owner_address=OWNER,
            procedure_versions=before,
        )
        report.update(request_id=result.request_id, event_id=result.event_id, replayed=result.replayed)
        report["context_version"] = before.context_version
        learned = _wait_for(
            lambda: [
                m for m in memloop.context(USER, QUERY).memories if result.event_id in m.provenance.source_event_ids
            ]
        )
        memory = learned[0]
        report["memory"] = {
            "memory_id": memory.memory_id,
            "type": memory.type,
            "text": memory.text,
            "state": memory.state,
            "source_event_ids": list(memory.provenance.source_event_ids),
            "trace_id": memory.provenance.trace_id,
            "policy_version": memory.provenance.policy_version,
            "confidence": memory.provenance.confidence,
        }
        report["async_memory_ids"] = asyncio.run(_async_context(settings, token_file))
        forgotten = memloop.forget(memory_id=memory.memory_id, reason="user asked")
        report["forgotten"] = forgotten.memories_affected
        report["after_forget"] = [m.memory_id for m in memloop.context(USER, QUERY).memories]
        deletion = _wait_for(lambda: (d := memloop.deletion(forgotten.deletion_id)).complete and d)
        report["deletion"] = {"complete": deletion.complete, "steps": {s.location: s.state for s in deletion.steps}}
        report["pending_reviews"] = len(memloop.reviews(USER))
    print(json.dumps(report))


async def _async_context(settings: Targets, token_file: Path) -> list[str]:
    async with AsyncClient(**settings, token=lambda: token_file.read_text().strip()) as memloop:
        return [m.memory_id for m in (await memloop.context(USER, QUERY)).memories]


def _wait_for(probe, timeout: float = 90.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            sys.exit(f"not within {timeout} s: {probe}")
        time.sleep(0.3)
    return value


if __name__ == "__main__":
    main()
