"""NATS users and their permissions for memloop's services, and the server config blocks that enforce them.

A learning event is trusted by the worker because it came off the learning stream, so whoever may
publish there may forge one, and whoever may read it sees every tenant's conversation summaries.
The server therefore gives each service its own user and only the subjects its code uses:

- relay:   publishes `<prefix>.learning.>` (through JetStream, so the stream stores it); creates
           and updates the learning stream.
- worker:  consumes the learning stream through its durable pull consumer (create, info, next,
           acknowledge), publishes dead letters on `<prefix>.dlq.>`; creates both streams. It may
           not publish learning events.
- memory:  its notice subjects (`memory.changes`, `review.<tenant>`, `deletion.requests`,
           `deletion.acks`) and, for a deletion, reading and erasing single messages of the two
           streams by sequence. It can neither publish learning events nor create a consumer.
- console: the dead-letter page: reads and deletes dead letters and re-publishes one on its
           learning subject (a replay is an operator's decision, so the one other publisher).
- admin:   everything: the launcher, `memloop dlq`, tests and operators' tools.

Replies come back on a per-user inbox prefix (`services.common.nats_access.inbox_prefix`) that
only that user may subscribe to. Streams are created by the relay and the worker at start, as
before; memory and the console only touch streams that exist.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from services.common.nats_access import NatsAccess, inbox_prefix
from services.common.tls import TlsFiles

LOOP_USERS = ("relay", "worker", "memory", "console", "admin")


@dataclass(frozen=True)
class NatsUser:
    """A user of the server config: name, password and the subjects it may publish and subscribe to."""

    name: str
    password: str
    publish: tuple[str, ...]
    subscribe: tuple[str, ...]

    def __repr__(self) -> str:
        return f"NatsUser(name={self.name!r}, publish={self.publish!r}, subscribe={self.subscribe!r})"

    def access(self, tls: TlsFiles | None = None) -> NatsAccess:
        """What a client logging in as this user passes to `nats.connect`."""
        return NatsAccess(user=self.name, password=self.password, tls=tls)


def loop_permissions(prefix: str, learning_stream: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """(publish, subscribe) subjects per service, for subject prefix `prefix` and stream `learning_stream`."""
    learning, dlq = learning_stream, f"{learning_stream}_DLQ"
    api = "$JS.API"
    streams_setup = tuple(
        f"{api}.STREAM.{verb}.{stream}" for stream in (learning, dlq) for verb in ("INFO", "CREATE", "UPDATE")
    )
    consume = (
        f"{api}.CONSUMER.CREATE.{learning}",
        f"{api}.CONSUMER.CREATE.{learning}.>",
        f"{api}.CONSUMER.DURABLE.CREATE.{learning}.>",
        f"{api}.CONSUMER.INFO.{learning}.>",
        f"{api}.CONSUMER.MSG.NEXT.{learning}.>",
        f"$JS.ACK.{learning}.>",
    )
    read_erase = tuple(f"{api}.STREAM.MSG.{verb}.{stream}" for stream in (learning, dlq) for verb in ("GET", "DELETE"))
    notices = (
        f"{prefix}.memory.changes",
        f"{prefix}.review.*",
        f"{prefix}.deletion.requests",
        f"{prefix}.deletion.acks",
    )

    def inbox(user: str) -> str:
        return f"{inbox_prefix(user)}.>"

    return {
        "relay": (
            (
                f"{prefix}.learning.>",
                f"{api}.INFO",
                *(f"{api}.STREAM.{verb}.{learning}" for verb in ("INFO", "CREATE", "UPDATE")),
            ),
            (inbox("relay"),),
        ),
        "worker": (
            (f"{prefix}.dlq.>", f"{api}.INFO", *streams_setup, *consume, f"{api}.STREAM.MSG.GET.{learning}"),
            (inbox("worker"),),
        ),
        "memory": ((*notices, *read_erase), (*notices, inbox("memory"))),
        "console": (
            (
                f"{prefix}.learning.>",
                f"{api}.INFO",
                f"{api}.STREAM.INFO.{dlq}",
                f"{api}.STREAM.MSG.GET.{dlq}",
                f"{api}.STREAM.MSG.DELETE.{dlq}",
            ),
            (inbox("console"),),
        ),
        "admin": ((">",), (">",)),
    }


def loop_users(
    prefix: str,
    learning_stream: str,
    *,
    passwords: Mapping[str, str] | None = None,
    names: Iterable[str] = LOOP_USERS,
) -> dict[str, NatsUser]:
    """The loop's users with `passwords` (a fresh random one for every name not given)."""
    permissions = loop_permissions(prefix, learning_stream)
    given = passwords or {}
    users = {}
    for name in names:
        publish, subscribe = permissions[name]
        users[name] = NatsUser(name, given.get(name) or secrets.token_urlsafe(24), publish, subscribe)
    return users


def authorization_block(users: Iterable[NatsUser], *, password_variables: bool = False) -> str:
    """The nats-server `authorization` block: each user with its allow lists (everything else denied).

    Passwords are written as given: the config file is the server's own secret (mode 0600 in
    the data folder). With `password_variables` each password is instead a reference to the
    environment variable `password_variable(name)`, which nats-server resolves at start: the
    form for a server whose config is not a secret (a Helm chart's ConfigMap, the variables
    coming from a Secret).
    """
    lines = ["authorization {", "  users: ["]
    for user in users:
        permissions = json.dumps(
            {"publish": {"allow": list(user.publish)}, "subscribe": {"allow": list(user.subscribe)}}
        )
        password = f"${password_variable(user.name)}" if password_variables else json.dumps(user.password)
        lines.append(f'    {{"user": {json.dumps(user.name)}, "password": {password}, "permissions": {permissions}}}')
    lines += ["  ]", "}"]
    return "\n".join(lines)


def password_variable(user: str) -> str:
    """The environment variable a server config with `password_variables` reads `user`'s password from."""
    return f"MEMLOOP_NATS_{user.upper()}_PASSWORD"


def tls_block(files: TlsFiles, *, verify_clients: bool = True) -> str:
    """The nats-server `tls` block: its certificate, the CA, and (by default) client certificates required."""
    return "\n".join(
        [
            "tls {",
            f"  cert_file: {json.dumps(files.cert_file)}",
            f"  key_file: {json.dumps(files.key_file)}",
            f"  ca_file: {json.dumps(files.ca_file)}",
            f"  verify: {'true' if verify_clients else 'false'}",
            "  timeout: 5",
            "}",
        ]
    )


def write_password_files(users: Mapping[str, NatsUser], directory: Path) -> dict[str, Path]:
    """One file per user holding its password (mode 0600), for MEMLOOP_NATS_PASSWORD_FILE."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    paths = {}
    for name, user in users.items():
        path = directory / name
        path.touch(mode=0o600, exist_ok=True)
        path.chmod(0o600)
        path.write_text(user.password)
        paths[name] = path
    return paths


def main(argv: list[str] | None = None) -> int:
    """Print the authorization block for a NATS that memloop does not start (Helm, compose, systemd)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m services.common.infra.nats_auth",
        description="Print nats-server's authorization block for memloop's services; each password is read"
        " by the server from MEMLOOP_NATS_<USER>_PASSWORD.",
    )
    parser.add_argument("--prefix", default="memloop", help="MEMLOOP_SUBJECT_PREFIX of the deployment")
    parser.add_argument("--stream", default="MEMLOOP_LEARNING", help="MEMLOOP_LEARNING_STREAM of the deployment")
    args = parser.parse_args(argv)
    users = loop_users(args.prefix, args.stream, passwords=dict.fromkeys(LOOP_USERS, "unused"))
    print(authorization_block(users.values(), password_variables=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
