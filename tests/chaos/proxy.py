"""A TCP proxy between two processes that can cut every live connection on demand (chaos only)."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from services.common.infra.processes import free_port


class CuttingProxy:
    """Listens on 127.0.0.1:`port` and forwards to `upstream`; `cut()` drops every open connection."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.port = free_port()
        self._upstream = (upstream_host, upstream_port)
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="chaos-proxy", daemon=True)
        self.cuts = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> CuttingProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        return self

    def cut(self) -> int:
        """Close every connection through the proxy now (both sides see a reset); returns how many."""
        dropped: int = asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(10)
        self.cuts += 1
        return dropped

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True)
        self._writers -= {writer, up_writer}

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    async def _cut(self) -> int:
        live = list(self._writers)
        for writer in live:
            transport = writer.transport
            with contextlib.suppress(Exception):
                transport.abort()
        return len(live)

    async def _stop(self) -> None:
        await self._cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
