"""An agent turn with memloop: ask for context, answer, record the result; the next turn shows what
was learned from it. Run it against a running stack (`memloop up` prints the targets):

    MEMLOOP_SERVING_TARGET=127.0.0.1:50051 MEMLOOP_MEMORY_TARGET=127.0.0.1:50052 \
    MEMLOOP_TENANT=acme MEMLOOP_TOKEN=... python examples/agent_loop.py
"""

import time
import uuid

from memloop_client import Client, Email

USER, OWNER, QUESTION = "alice", "alice@acme.example", "When can I book meetings with Alice?"


def answer(question: str, known: list[str]) -> str:  # your agent (an LLM call) goes here
    return f"{question} Known: {'; '.join(known) or 'nothing yet'}."


with Client.from_env() as memloop:
    ctx = memloop.context(USER, QUESTION, k=3)
    reply = answer(QUESTION, [m.text for m in ctx.memories])
    mail = Email(OWNER, "assistant@acme.example", "Scheduling", "Please keep my meetings after 10:00.")
    result = memloop.record(USER, thread=f"thr-{uuid.uuid4().hex[:8]}", route="assistant.instruction",
                            reply=reply, email=mail, owner_address=OWNER,
                            procedure_versions=ctx)  # tells learning exactly what this turn saw
    print(f"turn 1: saw {len(ctx.memories)} memories, recorded {result.event_id} (replayed={result.replayed})")

    deadline = time.monotonic() + 90  # learning runs in the background: wait for this event's memory
    while not (learned := [m for m in memloop.context(USER, QUESTION, k=3).memories
                           if result.event_id in m.provenance.source_event_ids]):
        if time.monotonic() > deadline:
            raise SystemExit("nothing learned from turn 1 within 90 s")
        time.sleep(0.5)
    for m in learned:
        print(f"turn 2: learned {m.type} {m.text!r} "
              f"(policy {m.provenance.policy_version}, confidence {m.provenance.confidence:.2f})")
