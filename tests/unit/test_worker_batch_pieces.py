"""The pieces batching relies on besides the consumer: its settings, the bound on memory calls in
flight, and the learned extractor reading a whole batch in one model call."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from services.common.auth_keys import SigningKey
from services.worker.adapters.bounded import BoundedMemory
from services.worker.adapters.in_memory import InMemoryMemory
from services.worker.adapters.sentence_model import load_heads
from services.worker.bootstrap import WorkerSettings
from services.worker.domain.extraction import EmailContent, ExtractionInput
from services.worker.domain.learned_extraction import LearnedExtractor
from services.worker.service.model import ApplyOutcome


def _settings(**env: str) -> WorkerSettings:
    required = {f"MEMLOOP_{name}_TARGET": "127.0.0.1:1" for name in ("SERVING", "POLICY", "MEMORY")}
    keys = SigningKey.generate().public_pem()
    return WorkerSettings.from_env({**required, "MEMLOOP_SERVICE_TOKEN": "t", "MEMLOOP_AUTH_PUBLIC_KEYS": keys, **env})


def test_batches_default_to_64_messages_or_1_s_with_two_batches_in_flight() -> None:
    settings = _settings()
    assert (settings.batch_size, settings.batch_wait_seconds, settings.concurrency) == (64, 1.0, 128)
    assert settings.memory_calls == 8
    assert settings.consumer.max_ack_pending >= settings.concurrency


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MEMLOOP_WORKER_BATCH_SIZE": "257"}, "MEMLOOP_WORKER_BATCH_SIZE"),
        ({"MEMLOOP_WORKER_BATCH_SIZE": "0"}, "MEMLOOP_WORKER_BATCH_SIZE"),
        ({"MEMLOOP_WORKER_BATCH_WAIT_MS": "0"}, "MEMLOOP_WORKER_BATCH_WAIT_MS"),
    ],
)
def test_a_batch_the_peers_would_refuse_or_a_zero_wait_stops_the_process(env: dict[str, str], named: str) -> None:
    with pytest.raises(SystemExit, match=named):
        _settings(**env)


async def test_memory_calls_in_flight_never_exceed_the_bound_whatever_the_batch() -> None:
    # Given memory that takes a while per call and counts how many it serves at once
    class Slow(InMemoryMemory):
        busy: int = 0
        most: int = 0

        async def apply(self, **kw: Any) -> ApplyOutcome:
            self.busy += 1
            self.most = max(self.most, self.busy)
            await asyncio.sleep(0.01)
            self.busy -= 1
            return await super().apply(**kw)

    slow = Slow()
    bounded = BoundedMemory(slow, slow, limit=3)

    # When twenty events are applied at once
    await asyncio.gather(
        *(bounded.apply(event_id=f"e{i}", trace_id="", tenant="acme", user="u", decisions=[]) for i in range(20))
    )

    # Then every event was applied, never more than three at a time
    assert len(slow.applied) == 20
    assert slow.most == 3


class CountingEncoder:
    """A stand-in sentence encoder: a fixed pseudo-random unit vector per text; counts model calls."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        rows = [np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384) for text in texts]
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), 384)
        norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        return np.asarray(matrix / norms, dtype=np.float32)


def _mail(i: int, body: str) -> ExtractionInput:
    return ExtractionInput(
        event_id=f"evt-{i}",
        trace_id="ab" * 16,
        tenant="acme",
        user="alice",
        route="assistant.instruction",
        email=EmailContent("alice@acme.example", "alice@acme.example", "Note", body),
        from_owner=True,
    )


def test_the_learned_extractor_reads_a_batch_in_one_model_call_with_the_candidates_of_one_call_each() -> None:
    # Given the shipped heads over a stand-in encoder, and four owner mails
    encoder = CountingEncoder()
    extractor = LearnedExtractor(encoder, load_heads())
    mails = [
        _mail(0, "I prefer meetings after 10:00. My manager is Dana."),
        _mail(1, "Please reply to me in French."),
        _mail(2, "I am vegetarian. Thanks!"),
        _mail(3, "I moved to Mountain Time."),
    ]

    # When they are extracted one by one, then as one batch
    alone = [extractor.extract(mail) for mail in mails]
    calls_alone = encoder.calls
    batch = extractor.extract_many(mails)

    # Then the batch took one model call (not one per mail) and gave exactly the same candidates
    assert calls_alone == len(mails)
    assert encoder.calls - calls_alone == 1
    assert batch == alone
    assert sum(len(c) for c in alone if isinstance(c, list)) >= 3
