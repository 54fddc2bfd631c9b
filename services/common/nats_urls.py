"""MEMLOOP_NATS_URL may name several servers of one cluster, comma-separated; nats-py wants a list.

nats-py parses a single string as one URL, so `nats://a:4222,nats://b:4222` would not connect.
Every service passes `nats_servers(url)` instead: with all nodes of a JetStream cluster in its
pool, a client connects to whichever answers and reconnects to another when its node goes away.
"""

from __future__ import annotations

from typing import Any


def nats_servers(url: str) -> list[str]:
    """The comma-separated server URLs in `url`, in order, blanks dropped (one URL gives a list of one)."""
    return [part.strip() for part in url.split(",") if part.strip()]


def one_shot_options(url: str) -> dict[str, Any]:
    """nats.connect options for a short-lived client (a CLI command, one erase pass).

    nats-py tries only one server of its pool on the first connect when reconnecting is off; with
    several servers it is allowed one pass over the pool, so a dead node is skipped. One server
    keeps the plain behaviour: fail at once.
    """
    servers = nats_servers(url)
    if len(servers) == 1:
        return {"servers": servers, "allow_reconnect": False}
    return {"servers": servers, "allow_reconnect": True, "max_reconnect_attempts": 1, "reconnect_time_wait": 0.1}
