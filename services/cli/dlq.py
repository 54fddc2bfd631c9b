"""`memloop dlq list` and `memloop dlq replay <event_id|--all>`: the operator's hands on dead letters.

Where NATS is: `--nats-url`, `--prefix` and `--stream` if given, else MEMLOOP_NATS_URL,
MEMLOOP_SUBJECT_PREFIX and MEMLOOP_LEARNING_STREAM, else the `stack.json` a running `memloop up`
wrote in the data folder, else the defaults. Credentials: a user in the URL
(`nats://user:password@host:port`, as `stack.json` records the admin's) or MEMLOOP_NATS_USER /
MEMLOOP_NATS_PASSWORD(_FILE); TLS from MEMLOOP_NATS_TLS / MEMLOOP_TLS and their files, else the
operator certificate a `memloop up --tls` recorded in `stack.json`. Replaying is safe to repeat: memory applies an event
at most once, and a replay interrupted after publishing is deduplicated by its message id.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nats

from services.common.nats_access import NatsAccess, redact_url
from services.common.nats_connect import connect_nats
from services.common.nats_urls import one_shot_options
from services.common.settings import nats_access
from services.common.tls import TlsFiles
from services.worker.adapters.dead_letters import DeadLetter, DeadLetterQueue
from services.worker.adapters.jetstream import StreamNames

_DEFAULTS = {"nats_url": "nats://127.0.0.1:4222", "subject_prefix": "memloop", "learning_stream": "MEMLOOP_LEARNING"}
_ENV = {
    "nats_url": "MEMLOOP_NATS_URL",
    "subject_prefix": "MEMLOOP_SUBJECT_PREFIX",
    "learning_stream": "MEMLOOP_LEARNING_STREAM",
}


@dataclass(frozen=True)
class DlqTarget:
    """Which NATS server and which learning stream the command works on."""

    nats_url: str
    streams: StreamNames
    access: NatsAccess = field(default_factory=NatsAccess)


def _resolve(args: argparse.Namespace) -> DlqTarget:
    stack: dict[str, str] = {}
    stack_tls: TlsFiles | None = None
    stack_file = Path(args.data_dir) / "stack.json"
    if stack_file.exists():
        recorded = json.loads(stack_file.read_text())
        stack = {k: str(v) for k, v in recorded.items() if isinstance(v, str)}
        stack_tls = TlsFiles(**recorded["tls"]) if isinstance(recorded.get("tls"), dict) else None
    access = nats_access(os.environ)
    if access.tls is None and stack_tls is not None:
        access = NatsAccess(user=access.user, password=access.password, tls=stack_tls)
    flags = {"nats_url": args.nats_url, "subject_prefix": args.prefix, "learning_stream": args.stream}

    def pick(key: str) -> str:
        return flags[key] or os.environ.get(_ENV[key], "").strip() or stack.get(key, "") or _DEFAULTS[key]

    return DlqTarget(
        nats_url=pick("nats_url"),
        streams=StreamNames(prefix=pick("subject_prefix"), learning_stream=pick("learning_stream")),
        access=access,
    )


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def _as_json(entry: DeadLetter, now: datetime.datetime) -> dict[str, object]:
    return {
        "sequence": entry.sequence,
        "event_id": entry.event_id,
        "reason": entry.reason,
        "attempts": entry.attempts,
        "last_error": entry.last_error,
        "subject": entry.original_subject,
        "age_seconds": round(entry.age_seconds(now), 3),
    }


def _print_table(entries: list[DeadLetter], now: datetime.datetime) -> None:
    if not entries:
        print("no dead-lettered events")
        return
    rows = [("SEQ", "EVENT ID", "REASON", "ATTEMPTS", "AGE", "LAST ERROR")]
    rows += [
        (
            str(e.sequence),
            e.event_id or "(unparsed)",
            e.reason,
            str(e.attempts),
            _age(e.age_seconds(now)),
            e.last_error,
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)) + "  " + row[5])


async def _run(args: argparse.Namespace, target: DlqTarget) -> int:
    client = await connect_nats(
        **one_shot_options(target.nats_url),
        connect_timeout=5,
        **target.access.connect_options(),
    )
    try:
        queue = DeadLetterQueue(client.jetstream(), target.streams)
        entries = await queue.list()
        now = datetime.datetime.now(datetime.UTC)
        if args.action == "list":
            if args.json:
                print(json.dumps([_as_json(e, now) for e in entries], indent=2))
            else:
                _print_table(entries, now)
            return 0
        chosen = entries if args.all else [e for e in entries if e.event_id == args.event_id]
        if not chosen:
            print(f"no dead-lettered event {args.event_id!r}" if not args.all else "no dead-lettered events")
            return 0 if args.all else 1
        for entry in chosen:
            replayed = await queue.replay(entry)
            note = " (already republished)" if replayed.duplicate else ""
            print(
                f"replayed {replayed.event_id or '(unparsed)'}: dead letter {replayed.dead_letter_sequence} "
                f"-> learning stream sequence {replayed.learning_sequence}{note}"
            )
        return 0
    finally:
        await client.close()


def dlq_main(argv: list[str]) -> int:
    """Entry of `memloop dlq`; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="memloop dlq", description="List or replay dead-lettered learning events.")
    parser.add_argument("--nats-url", default="")
    parser.add_argument("--prefix", default="", help="subject prefix (MEMLOOP_SUBJECT_PREFIX)")
    parser.add_argument("--stream", default="", help="learning stream (MEMLOOP_LEARNING_STREAM)")
    parser.add_argument("--data-dir", default=os.environ.get("MEMLOOP_DATA_DIR", ".memloop"))
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="show dead letters: event id, reason, attempts, age, last error")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    replay = actions.add_parser("replay", help="put dead letters back on the learning stream")
    which = replay.add_mutually_exclusive_group(required=True)
    which.add_argument("event_id", nargs="?", default="")
    which.add_argument("--all", action="store_true")
    args = parser.parse_args(argv)
    target = _resolve(args)
    try:
        return asyncio.run(_run(args, target))
    except (nats.errors.Error, OSError, TimeoutError) as exc:
        where = redact_url(target.nats_url)
        print(f"memloop dlq: cannot use NATS at {where}: {type(exc).__name__} {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(dlq_main(sys.argv[1:]))
