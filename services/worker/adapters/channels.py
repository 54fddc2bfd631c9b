"""A gRPC channel to one peer that is replaced once the peer was found unreachable.

gRPC backs off reconnecting exponentially (up to two minutes by default), and while a channel
waits in TRANSIENT_FAILURE every call fails at once. After a long outage of memory, the worker
would therefore keep failing for up to two minutes after memory is back — long enough to spend
the retry budget and dead-letter events that an outage shorter than the dead-letter age must not
touch. A fresh channel connects on its first call, so the adapters swap in a new one (built by
the shared `aio_channel`, with the bearer token and tracing) after an UNAVAILABLE, at most once
per `min_interval`. The old channel is closed after a grace period, so calls still on it finish.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc

from services.common.grpc_client import aio_channel

ChannelFactory = Callable[[str, str], grpc.aio.Channel]


class PeerChannel:
    """The current channel to `target`; `renew()` after the peer was unreachable."""

    def __init__(
        self,
        target: str,
        token: str,
        *,
        factory: ChannelFactory = aio_channel,
        min_interval: float = 1.0,
        close_grace: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._target = target
        self._token = token
        self._factory = factory
        self._min_interval = min_interval
        self._close_grace = close_grace
        self._clock = clock
        self._channel = factory(target, token)
        self._created = clock()
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def channel(self) -> grpc.aio.Channel:
        return self._channel

    def renew(self) -> bool:
        """Replace the channel unless it was created less than `min_interval` ago; True if replaced."""
        if self._clock() - self._created < self._min_interval:
            return False
        old, self._channel, self._created = self._channel, self._factory(self._target, self._token), self._clock()
        task = asyncio.get_running_loop().create_task(old.close(self._close_grace))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return True

    async def close(self) -> None:
        await self._channel.close(None)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
