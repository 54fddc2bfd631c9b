"""Renewing a peer's channel after it was unreachable, so recovery is not hidden by gRPC's backoff."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc

from services.worker.adapters.channels import PeerChannel


@dataclass
class FakeChannel:
    name: int
    closed_with: list[float | None] = field(default_factory=list)

    async def close(self, grace: float | None = None) -> None:
        self.closed_with.append(grace)


class Factory:
    def __init__(self) -> None:
        self.made: list[FakeChannel] = []

    def __call__(self, target: str, token: str) -> grpc.aio.Channel:
        self.made.append(FakeChannel(len(self.made)))
        return self.made[-1]  # type: ignore[return-value]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_renew_swaps_in_a_fresh_channel_and_closes_the_old_one_with_grace() -> None:
    # Given a peer channel created two seconds ago
    factory, clock = Factory(), Clock()
    peer = PeerChannel("memory:1", "tok", factory=factory, min_interval=1.0, close_grace=5.0, clock=clock)
    first = peer.channel
    clock.now += 2.0

    # When it is renewed after the peer was unreachable
    renewed = peer.renew()
    await peer.close()

    # Then calls go to a new channel, and the old one was closed with the grace period
    assert renewed is True
    assert peer.channel is not first
    assert len(factory.made) == 2
    assert factory.made[0].closed_with == [5.0]


async def test_renew_is_rate_limited_so_a_burst_of_failures_builds_one_channel() -> None:
    # Given a peer channel just created
    factory, clock = Factory(), Clock()
    peer = PeerChannel("memory:1", "tok", factory=factory, min_interval=1.0, clock=clock)

    # When many calls fail within the interval
    results = [peer.renew() for _ in range(5)]

    # Then no new channel is built
    assert results == [False] * 5
    assert len(factory.made) == 1
    await peer.close()
