"""`memloop forget` and `memloop deletion show`: the operator's hands on the deletion workflow.

    memloop forget --tenant acme (--memory-id ID | --user U | --event-id E | --request-id R) [--reason TEXT]
    memloop deletion show <deletion_id> --tenant acme [--json]

Both reach the memory service named in the `stack.json` a running `memloop up` wrote in the data
folder, with a token minted with the stack's issuer key (subject `--subject`, default
"operator"): `forget` asks as a tenant admin, `show` as a reader. `forget` prints the deletion id
as soon as the targets are unretrievable; `--wait` then follows it until every location is done.
`--idempotency-key` makes a retried `forget` return the first deletion instead of a second one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import grpc

from services.common.auth import issue_token
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_client import sync_channel
from services.common.tls import TlsFiles

_STATE = {
    pb.DELETION_STEP_STATE_PENDING: "pending",
    pb.DELETION_STEP_STATE_DONE: "done",
    pb.DELETION_STEP_STATE_FAILED: "failed",
}
_SCOPE = {pb.FORGET_SCOPE_MEMORY: "memory", pb.FORGET_SCOPE_USER: "user", pb.FORGET_SCOPE_EVENT: "event"}


def _data_dir() -> Path:
    return Path(os.environ.get("MEMLOOP_DATA_DIR", ".memloop"))


def _memory(data_dir: Path, tenant: str, subject: str, roles: list[str]) -> tuple[grpc.Channel, Any]:
    stack_file = data_dir / "stack.json"
    if not stack_file.exists():
        raise SystemExit(f"memloop: no running stack ({stack_file} missing); start one with `memloop up`")
    info = json.loads(stack_file.read_text())
    issuer = SigningKey.from_file(Path(info["auth_issuer_key_file"]))
    token = issue_token(issuer, subject=subject, tenant=tenant, roles=roles)
    tls = TlsFiles(**info["tls"]) if info.get("tls") else None  # a `memloop up --tls` stack: the operator's cert
    channel = sync_channel(info["services"]["memory"], token, tls)
    return channel, pb_grpc.MemoryServiceStub(channel)


def _fail(prog: str, error: grpc.RpcError) -> int:
    print(f"{prog}: {error.code().name}: {error.details()}", file=sys.stderr)
    return 1


def forget_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memloop forget", description="Start a deletion; prints its id.")
    parser.add_argument("--tenant", required=True)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--memory-id", help="one memory (and the versions it superseded)")
    target.add_argument("--user", help="every record of the tenant's user")
    target.add_argument("--event-id", help="everything derived from one learning event")
    target.add_argument("--request-id", help="everything derived from the event of one serving request")
    parser.add_argument("--reason", default="")
    parser.add_argument("--idempotency-key", default="", help="repeat-safe: the same key returns the same deletion")
    parser.add_argument("--subject", default="operator", help="who asks (recorded as requested_by)")
    parser.add_argument("--wait", action="store_true", help="follow the deletion until every location is done")
    parser.add_argument("--data-dir", type=Path, default=_data_dir())
    args = parser.parse_args(argv)
    # Exactly one target is set (the oneof decides the scope), so only the chosen flag is passed.
    targets = {
        "memory_id": args.memory_id,
        "user": args.user,
        "event_id": args.event_id,
        "source_request_id": args.request_id,
    }
    chosen = {name: value for name, value in targets.items() if value is not None}
    request = pb.ForgetRequest(tenant=args.tenant, request_id=args.idempotency_key, reason=args.reason, **chosen)
    channel, memory = _memory(args.data_dir, args.tenant, args.subject, ["admin"])
    try:
        receipt = memory.Forget(request, timeout=60)
        print(f"deletion {receipt.deletion_id}: {receipt.memories_affected} memories unretrievable now")
        if args.wait:
            return _follow(memory, args.tenant, receipt.deletion_id)
        return 0
    except grpc.RpcError as error:
        return _fail("memloop forget", error)
    finally:
        channel.close()


def deletion_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memloop deletion", description="Show a deletion's progress.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="each location's state and completion time")
    show.add_argument("deletion_id")
    show.add_argument("--tenant", required=True)
    show.add_argument("--json", action="store_true")
    show.add_argument("--subject", default="operator")
    show.add_argument("--data-dir", type=Path, default=_data_dir())
    args = parser.parse_args(argv)
    channel, memory = _memory(args.data_dir, args.tenant, args.subject, ["reader"])
    try:
        found = memory.GetDeletion(
            pb.GetDeletionRequest(tenant=args.tenant, deletion_id=args.deletion_id), timeout=30
        ).deletion
    except grpc.RpcError as error:
        return _fail("memloop deletion show", error)
    finally:
        channel.close()
    if args.json:
        print(json.dumps(as_json(found), indent=2))
    else:
        for line in format_deletion(found):
            print(line)
    return 0 if found.complete else 3


def _follow(memory: Any, tenant: str, deletion_id: str, timeout: float = 600.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        found = memory.GetDeletion(pb.GetDeletionRequest(tenant=tenant, deletion_id=deletion_id), timeout=30).deletion
        if found.complete or time.monotonic() > deadline:
            for line in format_deletion(found):
                print(line)
            return 0 if found.complete else 3
        time.sleep(0.5)


def as_json(found: pb.Deletion) -> dict[str, Any]:
    return {
        "deletion_id": found.deletion_id,
        "scope": _SCOPE.get(found.scope, "unspecified"),
        "requested_by": found.requested_by,
        "create_time": _time(found, "create_time"),
        "complete": found.complete,
        "complete_time": _time(found, "complete_time"),
        "memories_affected": found.memories_affected,
        "steps": [
            {
                "location": s.location,
                "state": _STATE.get(s.state, "unspecified"),
                "error": s.error,
                "complete_time": _time(s, "complete_time"),
            }
            for s in found.steps
        ],
    }


def format_deletion(found: pb.Deletion) -> list[str]:
    summary = as_json(found)
    lines = [
        f"deletion {summary['deletion_id']}  scope {summary['scope']}  requested by {summary['requested_by']}"
        f"  at {summary['create_time']}  memories {summary['memories_affected']}",
        f"{'complete at ' + summary['complete_time'] if found.complete else 'IN PROGRESS'}",
    ]
    for step in summary["steps"]:
        when = step["complete_time"] or "-"
        error = f"  {step['error']}" if step["error"] else ""
        lines.append(f"  {step['location']:<28} {step['state']:<8} {when}{error}")
    return lines


def _time(message: Any, field: str) -> str:
    if not message.HasField(field):
        return ""
    return str(getattr(message, field).ToDatetime().isoformat(timespec="milliseconds") + "Z")
