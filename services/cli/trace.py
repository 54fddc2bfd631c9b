"""`memloop trace <event_id|request_id>`: one event's timeline, from serving's commit to memory.

Three sources, joined on the event id and its trace id: serving's outbox record (commit, publish,
stream sequence, duplicate flag), the spans every process wrote to the shared span file (each
delivery, each policy decision, each memory call), and memory's audit trail (each transition,
review and deletion). Every line carries the event id and trace id, with times and the lag since
the commit, so the delay at each hop is visible.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import (
    memory_service_pb2,
    memory_service_pb2_grpc,
    serving_service_pb2,
    serving_service_pb2_grpc,
)
from services.common.grpc_client import sync_channel
from services.common.tls import TlsFiles

# Span attributes worth a line of the timeline; the rest (peer addresses, user agents) is noise here.
_KEPT_ATTRIBUTES = ("memloop.", "messaging.nats", "messaging.destination")


@dataclass(frozen=True)
class TimelineEntry:
    """One hop of an event's life."""

    at: datetime
    hop: str
    event_id: str
    trace_id: str
    detail: str


def _ts(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def read_spans(span_file: Path, trace_id: str) -> list[dict[str, Any]]:
    if not span_file.exists():
        return []
    spans = []
    with span_file.open(encoding="utf-8") as lines:
        for line in lines:
            if trace_id in line:
                span = json.loads(line)
                if span.get("trace_id") == trace_id:
                    spans.append(span)
    return sorted(spans, key=lambda s: s["start_ns"])


def collect_timeline(
    serving_target: str,
    memory_target: str,
    token: str,
    tenant: str,
    ident: str,
    span_file: Path | None,
    tls: TlsFiles | None = None,
) -> list[TimelineEntry]:
    """Gather the timeline through public APIs and the span file; raises grpc.RpcError if unknown."""
    with (
        sync_channel(serving_target, token, tls) as serving_channel,
        sync_channel(memory_target, token, tls) as memory_channel,
    ):
        serving = serving_service_pb2_grpc.ServingServiceStub(serving_channel)
        memory = memory_service_pb2_grpc.MemoryServiceStub(memory_channel)
        is_event = len(ident) == 36 and ident.count("-") == 4
        key = {"event_id": ident} if is_event else {"request_id": ident}
        outbox = serving.GetOutboxEvent(serving_service_pb2.GetOutboxEventRequest(tenant=tenant, **key), timeout=10)
        event = outbox.event
        entries = [
            TimelineEntry(
                event.commit_time.ToDatetime(tzinfo=UTC),
                "serving.commit",
                event.event_id,
                event.trace_id,
                f"request {event.request_id} route {event.route} content {event.content_ref}",
            )
        ]
        if outbox.state == serving_service_pb2.OUTBOX_STATE_PUBLISHED:
            entries.append(
                TimelineEntry(
                    outbox.publish_time.ToDatetime(tzinfo=UTC),
                    "relay.published",
                    event.event_id,
                    event.trace_id,
                    f"stream seq {outbox.stream_sequence} duplicate={outbox.duplicate} "
                    f"attempts={outbox.publish_attempts}",
                )
            )
        for span in read_spans(span_file, event.trace_id) if span_file else []:
            attributes = {k: v for k, v in span.get("attributes", {}).items() if k.startswith(_KEPT_ATTRIBUTES)}
            entries.append(
                TimelineEntry(
                    _ts(span["start_ns"] / 1e9),
                    f"span {span.get('service', '')}",
                    event.event_id,
                    span["trace_id"],
                    f"{span['name']} {(span['end_ns'] - span['start_ns']) / 1e6:.1f} ms {json.dumps(attributes)}",
                )
            )
        token_page = ""
        while True:
            page = memory.ListAuditEvents(
                memory_service_pb2.ListAuditEventsRequest(
                    tenant=tenant, event_id=event.event_id, page_size=500, page_token=token_page
                ),
                timeout=10,
            )
            for audit in page.audit_events:
                detail = json.dumps(json_format.MessageToDict(audit.detail), sort_keys=True)
                entries.append(
                    TimelineEntry(
                        audit.create_time.ToDatetime(tzinfo=UTC),
                        f"memory.{audit.action}",
                        audit.event_id,
                        audit.trace_id,
                        f"memory {audit.memory_id or '-'} actor {audit.actor} {detail}",
                    )
                )
            token_page = page.next_page_token
            if not token_page:
                break
    return sorted(entries, key=lambda e: e.at)


def format_timeline(entries: list[TimelineEntry]) -> list[str]:
    if not entries:
        return []
    start = entries[0].at
    return [
        f"{e.at.strftime('%H:%M:%S.%f')[:-3]} +{(e.at - start).total_seconds() * 1000:8.1f} ms  "
        f"{e.hop:<28} event {e.event_id} trace {e.trace_id}  {e.detail}"
        for e in entries
    ]


def trace_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memloop trace", description=__doc__)
    parser.add_argument("ident", help="event id or request id")
    parser.add_argument("--tenant", required=True)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MEMLOOP_DATA_DIR", ".memloop")))
    args = parser.parse_args(argv)
    stack_file = args.data_dir / "stack.json"
    if not stack_file.exists():
        print(f"memloop trace: no running stack ({stack_file} missing); start one with `memloop up`", file=sys.stderr)
        return 2
    info = json.loads(stack_file.read_text())
    issuer = SigningKey.from_file(Path(info["auth_issuer_key_file"]))
    token = issue_token(issuer, subject="memloop-trace", tenant=args.tenant, roles=["reader"])
    entries = collect_timeline(
        info["services"]["serving"],
        info["services"]["memory"],
        token,
        args.tenant,
        args.ident,
        Path(info["span_file"]),
        TlsFiles(**info["tls"]) if info.get("tls") else None,
    )
    for line in format_timeline(entries):
        print(line)
    return 0
