"""A refused first connect leaves nothing open (nats-py alone leaks its transport)."""

from __future__ import annotations

import asyncio
import gc

import pytest
from nats.errors import Error as NatsError

from services.common.nats_connect import connect_nats

_AUTH_INFO = b'INFO {"server_id":"refuser","version":"2.10.0","proto":1,"max_payload":1048576,"auth_required":true}\r\n'
_TLS_INFO = b'INFO {"server_id":"refuser","version":"2.10.0","proto":1,"max_payload":1048576,"tls_required":true}\r\n'


async def _refusing_server(closed: asyncio.Event, requires_tls: bool) -> tuple[asyncio.Server, int]:
    """Speaks just enough NATS to refuse every client, then waits for the client to hang up: either
    an authorization refusal after CONNECT, or a server that requires TLS of a plaintext client."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_TLS_INFO if requires_tls else _AUTH_INFO)
        await writer.drain()
        if not requires_tls:
            await reader.readline()  # CONNECT
            writer.write(b"-ERR 'Authorization Violation'\r\n")
            await writer.drain()
        while await reader.read(4096):
            pass
        closed.set()  # the client closed its end
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("requires_tls", [False, True], ids=["auth-refused", "plaintext-to-tls"])
def test_a_refused_connect_raises_and_closes_its_socket(requires_tls: bool) -> None:
    async def scenario() -> bool:
        closed = asyncio.Event()
        server, port = await _refusing_server(closed, requires_tls)
        async with server:
            with pytest.raises((NatsError, OSError, asyncio.TimeoutError)):
                await asyncio.wait_for(
                    connect_nats(f"nats://127.0.0.1:{port}", connect_timeout=2, allow_reconnect=False), timeout=10
                )
            try:
                await asyncio.wait_for(closed.wait(), timeout=3)
            except TimeoutError:
                return False
            return True

    assert asyncio.run(scenario()), "the refused client kept its socket open"
    gc.collect()  # a leaked transport would surface here as an unraisable ResourceWarning
