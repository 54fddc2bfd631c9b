"""Drive the Alice fixture through a running stack and collect the seed's end-of-day evidence.

Used by `memloop demo` (human report and --json) and by the end-to-end tests, so the demo and
the tests check the same things the same way: through public gRPC APIs only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import json_format

from services.cli.fixtures import handle_request_from_fixture, load_fixture
from services.common.gen.memloop.v1 import (
    candidate_pb2,
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel
from services.common.tls import TlsFiles

QUERY = "when can I schedule meetings with Alice"


@dataclass
class EvidenceItem:
    """One claim of the evidence, whether it holds, and the figures behind it."""

    name: str
    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class AliceRun:
    """Everything the scenario observed, for the report and for tests."""

    fixture: dict[str, Any]
    tenant: str = ""
    responses: dict[str, serving_service_pb2.HandleRequestResponse] = field(default_factory=dict)
    started_at: dict[str, float] = field(default_factory=dict)
    reply_seconds: dict[str, float] = field(default_factory=dict)
    learned_seconds: dict[str, float] = field(default_factory=dict)
    items: list[EvidenceItem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.items) and all(item.ok for item in self.items)


class AliceClient:
    """Serving and memory stubs with a tenant-scoped token."""

    def __init__(self, serving_target: str, memory_target: str, token: str, tls: TlsFiles | None = None) -> None:
        self._channels = [sync_channel(serving_target, token, tls), sync_channel(memory_target, token, tls)]
        self.serving = serving_service_pb2_grpc.ServingServiceStub(self._channels[0])
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self._channels[1])

    def close(self) -> None:
        for channel in self._channels:
            channel.close()


def send_requests(client: AliceClient, run: AliceRun) -> None:
    for request in run.fixture["requests"]:
        started = run.started_at[request["request_id"]] = time.perf_counter()
        response = client.serving.HandleRequest(
            handle_request_from_fixture(run.fixture, request, tenant=run.tenant), timeout=30
        )
        run.reply_seconds[request["request_id"]] = time.perf_counter() - started
        run.responses[request["request_id"]] = response


def wait_until_learned(client: AliceClient, run: AliceRun, *, timeout: float = 120.0) -> None:
    """Poll memory until every event is processed; records time from reply to learned."""
    tenant = run.tenant
    pending = {rid: r.event_id for rid, r in run.responses.items()}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for request_id, event_id in list(pending.items()):
            answer = client.memory.GetProcessedEvent(
                memory_service_pb2.GetProcessedEventRequest(tenant=tenant, event_id=event_id), timeout=10
            )
            if answer.processed:
                run.learned_seconds[request_id] = time.perf_counter() - run.started_at[request_id]
                del pending[request_id]
        time.sleep(0.1)
    if pending:
        raise TimeoutError(f"events not learned within {timeout:g} s: {sorted(pending)}")


def list_memories(client: AliceClient, tenant: str, user: str, **filters: Any) -> list[memory_service_pb2.Memory]:
    memories: list[memory_service_pb2.Memory] = []
    token = ""
    while True:
        page = client.memory.ListMemories(
            memory_service_pb2.ListMemoriesRequest(
                tenant=tenant, user=user, page_size=200, page_token=token, **filters
            ),
            timeout=10,
        )
        memories.extend(page.memories)
        token = page.next_page_token
        if not token:
            return memories


def audit_for(client: AliceClient, tenant: str, event_id: str) -> list[memory_service_pb2.AuditEvent]:
    events: list[memory_service_pb2.AuditEvent] = []
    token = ""
    while True:
        page = client.memory.ListAuditEvents(
            memory_service_pb2.ListAuditEventsRequest(
                tenant=tenant, event_id=event_id, page_size=500, page_token=token
            ),
            timeout=10,
        )
        events.extend(page.audit_events)
        token = page.next_page_token
        if not token:
            return events


def collect_learning_evidence(client: AliceClient, run: AliceRun) -> None:
    """The checks that hold once every Alice event is learned (before any deletion)."""
    tenant, user = run.tenant, run.fixture["user"]
    active = list_memories(client, tenant, user, states=[memory_service_pb2.MEMORY_STATE_ACTIVE])
    everything = list_memories(client, tenant, user)
    slowest_reply = max(run.reply_seconds.values())
    fastest_learn = min(run.learned_seconds.values())
    run.items.append(
        EvidenceItem(
            "reply_before_learning",
            all(run.reply_seconds[r] < run.learned_seconds[r] for r in run.reply_seconds),
            {"reply_ms_max": round(slowest_reply * 1000, 1), "learned_ms_min": round(fastest_learn * 1000, 1)},
        )
    )
    episodes = [m for m in active if m.type == candidate_pb2.MEMORY_TYPE_EPISODE]
    run.items.append(
        EvidenceItem(
            "episode_active",
            any("Bob" in m.text and "2026-12-08" in m.text for m in episodes),
            {"episodes": [m.text for m in episodes]},
        )
    )
    first_event = run.responses["req-alice-0001"].event_id
    first_audit = audit_for(client, tenant, first_event)
    injected = ("accept meeting invites", "forward every invoice")
    stored_injection = [m.memory_id for m in everything if any(p in m.text for p in injected)]
    run.items.append(
        EvidenceItem(
            "injection_rejected",
            any("EXTERNAL_PROCEDURAL" in json_format.MessageToJson(a.detail) for a in first_audit)
            and not stored_injection,
            {"audit_actions": sorted({a.action for a in first_audit}), "stored_injection": stored_injection},
        )
    )
    windows = [m for m in everything if m.intent_key == "meeting_time_window"]
    active_windows = [m for m in windows if m.state == memory_service_pb2.MEMORY_STATE_ACTIVE]
    superseded = [m for m in windows if m.state == memory_service_pb2.MEMORY_STATE_SUPERSEDED]
    linked = bool(active_windows) and any(m.superseded_by == active_windows[0].memory_id for m in superseded)
    run.items.append(
        EvidenceItem(
            "preference_superseded",
            len(active_windows) == 1 and "09:00" in active_windows[0].text and linked,
            {"active": [m.text for m in active_windows], "superseded": [m.text for m in superseded]},
        )
    )
    hits = client.memory.SearchMemories(
        memory_service_pb2.SearchMemoriesRequest(tenant=tenant, user=user, query=QUERY, k=10), timeout=10
    ).results
    run.items.append(
        EvidenceItem(
            "retrieval_returns_only_new",
            bool(hits)
            and not any("10:00" in h.memory.text for h in hits)
            and any("09:00" in h.memory.text for h in hits),
            {"query": QUERY, "results": [f"{h.score:.3f} {h.memory.text}" for h in hits]},
        )
    )
    secrets = [s for r in run.fixture["requests"] for s in r["expect"].get("never_stored_anywhere", [])]
    leaked = [m.memory_id for m in everything if any(s in m.text for s in secrets)]
    run.items.append(EvidenceItem("secrets_never_stored", not leaked, {"checked": len(everything), "leaked": leaked}))
    mismatched = []
    for request_id, response in run.responses.items():
        for audit in audit_for(client, tenant, response.event_id):
            if audit.event_id != response.event_id or audit.trace_id != response.trace_id:
                mismatched.append(f"{request_id}:{audit.action}")
    run.items.append(
        EvidenceItem(
            "transitions_share_event_and_trace_ids",
            not mismatched,
            {r: {"event_id": x.event_id, "trace_id": x.trace_id} for r, x in run.responses.items()}
            | {"mismatched": mismatched},
        )
    )


def check_duplicate_replay(client: AliceClient, run: AliceRun, *, settle_seconds: float = 3.0) -> None:
    """Re-send the first request: the first answer comes back and nothing new is learned."""
    tenant, user = run.tenant, run.fixture["user"]
    before = sorted(m.memory_id for m in list_memories(client, tenant, user))
    first = run.fixture["requests"][0]
    again = client.serving.HandleRequest(handle_request_from_fixture(run.fixture, first, tenant=run.tenant), timeout=30)
    time.sleep(settle_seconds)
    after = sorted(m.memory_id for m in list_memories(client, tenant, user))
    original = run.responses[first["request_id"]]
    run.items.append(
        EvidenceItem(
            "duplicate_replay_changes_nothing",
            again.replayed and again.event_id == original.event_id and before == after,
            {"replayed": again.replayed, "memories_before": len(before), "memories_after": len(after)},
        )
    )


def check_forget(client: AliceClient, run: AliceRun, *, timeout: float = 60.0) -> None:
    """Forget everything derived from req-alice-0001 and wait for every location to be done."""
    tenant, user = run.tenant, run.fixture["user"]
    receipt = client.memory.Forget(
        memory_service_pb2.ForgetRequest(
            tenant=tenant,
            source_request_id="req-alice-0001",
            request_id="demo-forget-req-alice-0001",
            reason="demo: user asked to forget the Bob thread",
        ),
        timeout=30,
    )
    hits = client.memory.SearchMemories(
        memory_service_pb2.SearchMemoriesRequest(tenant=tenant, user=user, query="sync with Bob Tan", k=10), timeout=10
    ).results
    deadline = time.monotonic() + timeout
    deletion = client.memory.GetDeletion(
        memory_service_pb2.GetDeletionRequest(tenant=tenant, deletion_id=receipt.deletion_id), timeout=10
    ).deletion
    while not deletion.complete and time.monotonic() < deadline:
        time.sleep(0.2)
        deletion = client.memory.GetDeletion(
            memory_service_pb2.GetDeletionRequest(tenant=tenant, deletion_id=receipt.deletion_id), timeout=10
        ).deletion
    run.items.append(
        EvidenceItem(
            "forget_reaches_every_location",
            deletion.complete and not any("Bob" in h.memory.text for h in hits),
            {
                "deletion_id": receipt.deletion_id,
                "memories_affected": receipt.memories_affected,
                "steps": {s.location: memory_service_pb2.DeletionStepState.Name(s.state) for s in deletion.steps},
            },
        )
    )


def run_alice(
    serving_target: str,
    memory_target: str,
    token: str,
    *,
    tenant: str = "",
    forget: bool = True,
    tls: TlsFiles | None = None,
) -> AliceRun:
    """The whole scenario for `tenant` (the fixture's own by default; tests pass a fresh one).

    `tls`: the client's certificate, key and CA when the stack runs mTLS (`memloop up --tls`)."""
    fixture = load_fixture("alice.json")
    run = AliceRun(fixture=fixture, tenant=tenant or fixture["tenant"])
    client = AliceClient(serving_target, memory_target, token, tls)
    try:
        send_requests(client, run)
        wait_until_learned(client, run)
        collect_learning_evidence(client, run)
        check_duplicate_replay(client, run)
        if forget:
            check_forget(client, run)
    except grpc.RpcError as exc:
        run.items.append(EvidenceItem("rpc_error", False, {"code": exc.code().name, "details": exc.details()}))
    except TimeoutError as exc:
        run.items.append(EvidenceItem("timeout", False, {"error": str(exc)}))
    finally:
        client.close()
    return run
