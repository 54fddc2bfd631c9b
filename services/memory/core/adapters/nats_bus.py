"""nats-py behind a synchronous face: its own asyncio loop on a daemon thread.

The memory service serves gRPC from a thread pool; NATS is only used for best-effort notices
(the database stays the truth and replicas also poll it), so publishing never blocks a request
and an unreachable server only delays peers until their next poll. The client reconnects forever
and re-subscribes by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from services.common.nats_access import NatsAccess
from services.common.nats_connect import connect_nats
from services.common.nats_urls import nats_servers

_log = logging.getLogger(__name__)

MessageHandler = Callable[[bytes, Mapping[str, str]], None]


class NatsBus:
    def __init__(self, url: str, *, name: str, access: NatsAccess | None = None) -> None:
        self._url = url
        self._access = access or NatsAccess()
        self._name = name
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"{name}-nats", daemon=True)
        self._client: Any = None
        self._connected = threading.Event()
        self._stopping = False
        self._handlers: list[tuple[str, MessageHandler]] = []

    def start(self, wait_seconds: float = 5.0) -> bool:
        """Start connecting; returns whether the first connection was made within `wait_seconds`."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._connect_forever(), self._loop)
        return self._connected.wait(wait_seconds)

    @property
    def connected(self) -> bool:
        return self._client is not None and bool(self._client.is_connected)

    def publish(self, subject: str, payload: bytes, headers: Mapping[str, str] | None = None) -> None:
        """Fire and forget; a failure is logged, never raised (callers have already committed)."""
        if self._stopping:
            return
        future = asyncio.run_coroutine_threadsafe(self._publish(subject, payload, dict(headers or {})), self._loop)
        future.add_done_callback(_log_failure(subject))

    def subscribe(self, subject: str, handler: MessageHandler) -> None:
        """Call `handler(payload, headers)` on the bus thread for every message; survives reconnects."""
        self._handlers.append((subject, handler))
        if self._connected.is_set():
            asyncio.run_coroutine_threadsafe(self._subscribe(subject, handler), self._loop)

    def close(self, timeout: float = 5.0) -> None:
        if self._stopping:
            return
        self._stopping = True
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    async def _connect_forever(self) -> None:
        while not self._stopping:
            try:
                self._client = await connect_nats(
                    servers=nats_servers(self._url),
                    name=self._name,
                    connect_timeout=2,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    **self._access.connect_options(),
                )
            except Exception as exc:
                _log.warning("NATS %s unreachable (%s); retrying", self._url, exc)
                await asyncio.sleep(1.0)
                continue
            for subject, handler in self._handlers:
                await self._subscribe(subject, handler)
            self._connected.set()
            return

    async def _subscribe(self, subject: str, handler: MessageHandler) -> None:
        async def deliver(msg: Any) -> None:
            try:
                handler(bytes(msg.data), dict(msg.headers or {}))
            except Exception:
                _log.exception("handler for %s failed", subject)

        await self._client.subscribe(subject, cb=deliver)

    async def _publish(self, subject: str, payload: bytes, headers: dict[str, str]) -> None:
        if self._client is None:
            raise ConnectionError("NATS not connected yet")
        await self._client.publish(subject, payload, headers=headers or None)

    async def _close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.drain()


def _log_failure(subject: str) -> Callable[[Any], None]:
    def check(future: Any) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            _log.warning("publish to %s failed: %s (peers will catch up by polling)", subject, exc)

    return check
