"""`memloop demo`: the whole stack on embedded defaults, Alice's mailbox through it, the evidence printed.

It ends by printing the console's review queue URL, where two of Alice's mails wait for a person,
and a reviewer token to sign in with. In a terminal (or with `--hold`) the stack then stays up
until Ctrl-C so the URL works; otherwise (`--no-hold`, CI, no terminal) it stops at once. Either
way nothing is left running afterwards. `--json` prints the same evidence for machines and exits 0
only when every item holds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import grpc

from services.cli.alice import AliceRun, run_alice
from services.cli.alice_review import queue_alice_reviews
from services.cli.stack import InfraError, Stack
from services.cli.stack_spec import StackSpec


def demo_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memloop demo", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the evidence as JSON")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MEMLOOP_DATA_DIR", ".memloop")) / "demo")
    parser.add_argument("--embedder", default=os.environ.get("MEMLOOP_EMBEDDER", "minilm"))
    parser.add_argument(
        "--hold",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep the stack (and the console) up after the evidence until Ctrl-C; default: when in a terminal",
    )
    args = parser.parse_args(argv)
    hold = sys.stdin.isatty() and not args.json if args.hold is None else args.hold
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
        serving, memory = stack.services["serving"].target, stack.services["memory"].target
        run = run_alice(serving, memory, stack.token("acme"))
        try:
            waiting = queue_alice_reviews(serving, memory, stack.token("acme"))
        except (TimeoutError, grpc.RpcError) as exc:
            print(f"memloop demo: Alice's review items did not arrive: {exc}", file=sys.stderr)
            waiting = []
        review_url = f"{stack.console_url}/review?user=alice"
        if args.json:
            print(json.dumps({**_as_json(run), "review_url": review_url, "review_items": len(waiting)}, indent=2))
        else:
            _print_report(run)
            print(f"\n{len(waiting)} of Alice's items wait for review in the console:")
            print(f"  sign in with: {stack.token('acme', ('reviewer', 'reader'), subject='demo-reviewer')}")
            if not hold:
                print("  (the stack stops now; run `make demo` in a terminal, or `memloop demo --hold`, to keep it up)")
            print(f"Review queue: {review_url}", flush=True)
        if hold:
            _wait_for_ctrl_c()
    except InfraError as exc:
        print(f"memloop demo: {exc}", file=sys.stderr)
        return 1
    finally:
        stack.stop()
    return 0 if run.ok else 1


def _wait_for_ctrl_c() -> None:
    print("The stack stays up for the console; Ctrl-C stops everything.", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()


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
