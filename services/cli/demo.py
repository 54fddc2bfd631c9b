"""`memloop demo`: the whole stack on embedded defaults, Alice's mailbox through it, the evidence printed.

Leaves nothing running: the stack is stopped however the run ends. `--json` prints the same
evidence for machines and exits 0 only when every item holds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from services.cli.alice import AliceRun, run_alice
from services.cli.stack import InfraError, Stack, StackSpec


def demo_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memloop demo", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the evidence as JSON")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MEMLOOP_DATA_DIR", ".memloop")) / "demo")
    parser.add_argument("--embedder", default=os.environ.get("MEMLOOP_EMBEDDER", "minilm"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.data_dir, ignore_errors=True)
    stamp = time.strftime("%Y%m%d%H%M%S")
    spec = StackSpec(
        data_dir=args.data_dir.resolve(),
        database_admin_url=os.environ.get("MEMLOOP_DATABASE_URL", ""),
        nats_url=os.environ.get("MEMLOOP_NATS_URL", ""),
        database_prefix=f"memloop_demo_{stamp}",
        subject_prefix=f"demo{stamp}",
        learning_stream=f"MEMLOOP_DEMO_{stamp}",
        embedder=args.embedder,
    )

    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    stack = Stack(spec)
    try:
        say("starting the stack (embedded PostgreSQL + NATS JetStream unless URLs are set)...")
        started = time.perf_counter()
        stack.start()
        for line in stack.describe():
            say(f"  {line}")
        say(f"stack up in {time.perf_counter() - started:.1f} s; sending Alice's mailbox...")
        run = run_alice(stack.services["serving"].target, stack.services["memory"].target, stack.token("acme"))
    except InfraError as exc:
        print(f"memloop demo: {exc}", file=sys.stderr)
        return 1
    finally:
        stack.stop()
    if args.json:
        print(json.dumps(_as_json(run), indent=2))
    else:
        _print_report(run)
    return 0 if run.ok else 1


def _as_json(run: AliceRun) -> dict[str, object]:
    return {
        "ok": run.ok,
        "items": [{"name": i.name, "ok": i.ok, "detail": i.detail} for i in run.items],
        "reply_ms": {k: round(v * 1000, 1) for k, v in run.reply_seconds.items()},
        "learned_ms": {k: round(v * 1000, 1) for k, v in run.learned_seconds.items()},
    }


def _print_report(run: AliceRun) -> None:
    print("\nAlice's mailbox, through the loop")
    print(f"{'request':<16} {'reply ms':>9} {'learned ms':>11}  event id")
    for request_id, response in run.responses.items():
        learned = run.learned_seconds.get(request_id)
        learned_ms = f"{learned * 1000:.0f}" if learned is not None else "-"
        print(f"{request_id:<16} {run.reply_seconds[request_id] * 1000:>9.1f} {learned_ms:>11}  {response.event_id}")
    print()
    for item in run.items:
        print(f"[{'ok' if item.ok else 'FAILED'}] {item.name}")
        for key, value in item.detail.items():
            print(f"       {key}: {value}")
    print(f"\n{'every item holds' if run.ok else 'SOME ITEMS FAILED'}")
