"""`nats.connect`, except that a connect which fails closes what it opened.

nats-py leaves its transport open when the first connect fails and reconnecting is off (an
authorization refusal, a TLS handshake cut short, a pool with no live server): the socket and its
TLS layer stay with the event loop until garbage collection finds them. A CLI command or a
per-call client (the console's dead-letter page, the deletion eraser) that meets a refused
connection would leak one descriptor per attempt; a test run turns the leak into an unraisable
ResourceWarning in whichever later test the collector happens to run.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nats.aio.client import Client

_CLOSE_WAIT_SECONDS = 1.0


async def connect_nats(*args: Any, **options: Any) -> Client:
    """A connected nats-py client, or the connect's own error with nothing left open."""
    client = Client()
    try:
        await client.connect(*args, **options)
    except BaseException:
        await _release_transport(client)
        raise
    return client


async def _release_transport(client: Client) -> None:
    """Close the socket a failed connect left behind.

    Not `client.close()`: on a client whose handshake failed (a plaintext client refused by a
    server that requires TLS) it waits forever for a connection that never finished opening.
    """
    transport: Any = getattr(client, "_transport", None)
    if transport is None:
        return
    with contextlib.suppress(Exception):
        transport.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(transport.wait_closed(), _CLOSE_WAIT_SECONDS)
