"""Stream set-up tolerates a concurrent creator (worker and relay), as on a fresh 3-node JetStream.

There, a second creator is refused ("stream name already in use with a different configuration",
err_code 10058) while the first creation is still forming its replica group, and a read right
after the refusal can still answer "not found". Set-up must wait for the stream, not fail.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.js import api
from nats.js.errors import BadRequestError, NotFoundError

from services.relay.adapters.jetstream import StreamSpec, ensure_stream
from services.worker.adapters import jetstream as worker_js
from services.worker.adapters.jetstream import StreamNames, ensure_streams


class RacedJetStream:
    """Every stream is being created by someone else: our create is refused and the stream shows
    up only after `forming_reads` more reads."""

    def __init__(self, forming_reads: int) -> None:
        self.forming_reads = forming_reads
        self.reads: dict[str, int] = {}
        self.created: list[str] = []
        self.updated: list[str] = []

    async def stream_info(self, name: str) -> api.StreamInfo:
        self.reads[name] = self.reads.get(name, 0) + 1
        if self.reads[name] <= self.forming_reads:
            raise NotFoundError(code=404, err_code=10059, description="stream not found")
        config = api.StreamConfig(name=name, subjects=[f"{name}.theirs"], duplicate_window=1.0, num_replicas=3)
        return api.StreamInfo(
            config=config, state=api.StreamState(messages=0, bytes=0, first_seq=0, last_seq=0, consumer_count=0)
        )

    async def add_stream(self, config: api.StreamConfig, **_: Any) -> api.StreamInfo:
        raise BadRequestError(
            code=400, err_code=10058, description="stream name already in use with a different configuration"
        )

    async def update_stream(self, config: api.StreamConfig, **_: Any) -> api.StreamInfo:
        assert config.name is not None
        self.updated.append(config.name)
        return await self.stream_info(config.name)


@pytest.fixture(autouse=True)
def no_real_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    real_sleep = asyncio.sleep

    async def instant(_: float) -> None:
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", instant)


def test_the_worker_waits_for_streams_another_process_is_creating() -> None:
    js = RacedJetStream(forming_reads=3)
    names = StreamNames(prefix="memloop", learning_stream="LEARN", replicas=3)
    asyncio.run(ensure_streams(js, names))  # type: ignore[arg-type]
    assert js.reads[names.learning_stream] == 4 and js.reads[names.dlq_stream] >= 4
    assert js.updated == [names.dlq_stream]  # the dead-letter stream is brought to our config once it exists


def test_the_relay_waits_for_the_stream_and_widens_it_to_its_subjects() -> None:
    js = RacedJetStream(forming_reads=3)
    spec = StreamSpec(name="LEARN", subject_prefix="memloop", duplicate_window_seconds=120.0, replicas=3)
    info = asyncio.run(ensure_stream(js, spec))  # type: ignore[arg-type]
    assert js.updated == ["LEARN"]
    assert info.config.name == "LEARN"


def test_a_stream_that_never_appears_is_an_error_naming_it() -> None:
    js = RacedJetStream(forming_reads=1000)
    with pytest.raises(RuntimeError, match="LEARN"):
        asyncio.run(worker_js._ensure_stream(js, api.StreamConfig(name="LEARN"), update=False))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="LEARN"):
        asyncio.run(ensure_stream(js, StreamSpec(name="LEARN", subject_prefix="m", duplicate_window_seconds=1.0)))  # type: ignore[arg-type]
