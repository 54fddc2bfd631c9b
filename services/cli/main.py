"""`memloop`: the operator's command. Each subcommand lives in its own module and is imported lazily,
so `memloop dlq list` does not pay for loading the embedding model or the stack launcher."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

DEFAULT_DATA_DIR = Path(os.environ.get("MEMLOOP_DATA_DIR", ".memloop"))


def up_main(argv: list[str]) -> int:
    from services.cli.stack import InfraError, Stack
    from services.cli.stack_file import write_stack_file
    from services.cli.stack_spec import StackSpec

    parser = argparse.ArgumentParser(prog="memloop up", description="Start the whole stack and wait for Ctrl-C.")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--memory-replicas", type=int, default=1)
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="3 NATS nodes (streams at R3), PostgreSQL primary + streaming standby, 2 relays, 2 workers,"
        " 2 memory replicas (services/cli/cluster.py)",
    )
    parser.add_argument("--embedder", default=os.environ.get("MEMLOOP_EMBEDDER", "minilm"))
    parser.add_argument("--console-port", type=int, default=int(os.environ.get("MEMLOOP_CONSOLE_PORT", "0") or 0))
    parser.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="make a local CA (in <data-dir>/tls) and run mTLS between all parts (default: on with --cluster)",
    )
    args = parser.parse_args(argv)
    spec = StackSpec(
        data_dir=args.data_dir.resolve(),
        database_admin_url=os.environ.get("MEMLOOP_DATABASE_URL", ""),
        nats_url=os.environ.get("MEMLOOP_NATS_URL", ""),
        embedder=args.embedder,
        memory_replicas=args.memory_replicas,
        console_port=args.console_port,
        tls=args.tls,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stack = Stack(spec)
    if args.cluster:
        from services.cli.cluster import ClusterStack

        stack = ClusterStack(spec)
    try:
        stack.start()
    except InfraError as exc:
        print(f"memloop up: {exc}", file=sys.stderr)
        return 1
    try:
        write_stack_file(stack, spec.data_dir / "stack.json")
        for line in stack.describe():
            print(line, flush=True)
        print(f"Console: {stack.console_url}/review", flush=True)
        print("memloop is up; Ctrl-C stops everything.", flush=True)
        stop.wait()
    finally:
        stack.stop()
        (spec.data_dir / "stack.json").unlink(missing_ok=True)
    return 0


def token_main(argv: list[str]) -> int:
    from services.cli.stack_spec import ISSUER_KEY_FILE
    from services.common.auth import issue_token
    from services.common.auth_keys import InvalidKey, SigningKey
    from services.common.settings import env_secret

    parser = argparse.ArgumentParser(
        prog="memloop token",
        description="Print a bearer token signed with the issuer's Ed25519 key: MEMLOOP_AUTH_ISSUER_KEY(_FILE),"
        " else the one `memloop up` keeps in the data folder.",
    )
    parser.add_argument("--tenant", required=True)
    parser.add_argument("--subject", default="operator")
    parser.add_argument("--roles", default="reader,writer")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    # A deployment's service token (tenant "*", role service) outlives an operator's hour.
    parser.add_argument("--ttl-seconds", type=int, default=3600)
    args = parser.parse_args(argv)
    if args.ttl_seconds < 1:
        parser.error("--ttl-seconds must be at least 1")
    try:
        pem = env_secret(os.environ, "MEMLOOP_AUTH_ISSUER_KEY") or (args.data_dir / ISSUER_KEY_FILE).read_text()
        issuer = SigningKey.from_pem(pem)
    except (OSError, InvalidKey) as exc:
        print(f"memloop token: no usable issuer key ({exc})", file=sys.stderr)
        return 2
    roles = args.roles.split(",")
    print(issue_token(issuer, subject=args.subject, tenant=args.tenant, roles=roles, ttl_seconds=args.ttl_seconds))
    return 0


def issuer_key_main(argv: list[str]) -> int:
    from services.cli.stack_spec import ISSUER_KEY_FILE, PUBLIC_KEYS_FILE
    from services.common.auth_keys import write_keypair

    parser = argparse.ArgumentParser(
        prog="memloop issuer-key",
        description="Write a token issuer key pair (kept if present): the private key signs tokens and stays"
        " with the issuer; the public key file is what services get as MEMLOOP_AUTH_PUBLIC_KEYS_FILE.",
    )
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    private, public = write_keypair(args.out_dir, private_name=ISSUER_KEY_FILE, public_name=PUBLIC_KEYS_FILE)
    print(f"private key (issuer only): {private}\npublic keys (services): {public}")
    return 0


# name -> (summary, module, function taking argv and returning an exit code)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "up": ("start the whole stack", "services.cli.main", "up_main"),
    "token": ("print a signed bearer token", "services.cli.main", "token_main"),
    "issuer-key": ("write a token issuer key pair", "services.cli.main", "issuer_key_main"),
    "demo": ("run the Alice scenario and print its evidence", "services.cli.demo", "demo_main"),
    "dlq": ("list or replay dead-lettered events", "services.cli.dlq", "dlq_main"),
    "forget": ("start a deletion", "services.cli.deletion", "forget_main"),
    "deletion": ("show a deletion's progress", "services.cli.deletion", "deletion_main"),
    "trace": ("print an event's timeline", "services.cli.trace", "trace_main"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print("usage: memloop <command> [args]\n")
        for name, (summary, _, _) in COMMANDS.items():
            print(f"  {name:<10} {summary}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    _, module, function = COMMANDS[argv[0]]
    command: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return command(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
