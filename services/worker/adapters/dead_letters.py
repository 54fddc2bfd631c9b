"""The dead-letter stream: how the worker files an event there, and how an operator lists and replays it.

A dead letter is the original message bytes on `<prefix>.dlq.<tenant>` with headers saying why
(`Memloop-Reason`), how often it was tried (`Memloop-Attempts`) and the last error
(`Memloop-Last-Error`, built from codes and field names only — never email text).

Ids, chosen so nothing is lost and nothing is doubled:

* dead-letter `Nats-Msg-Id` = `<event_id>:dlq:<learning stream sequence>`. A worker that crashes
  between filing and terminating files the same delivery again with the same id, and JetStream's
  duplicate window drops it; a replayed event is a new stream message with a new sequence, so if
  it fails again it is recorded again.
* replay `Nats-Msg-Id` = `<event_id>:replay:<dead-letter sequence>`: the original `<event_id>` is
  still inside the learning stream's duplicate window, so re-using it would be silently dropped.
  The dead letter is deleted only after the learning stream acknowledged the replay; a replay
  interrupted in between is repeated with the same id (a duplicate, dropped) and then deleted.

Replays are safe because memory applies each event at most once (event-level idempotency).
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Mapping
from dataclasses import dataclass

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from services.worker.adapters.jetstream import StreamNames

REASON = "Memloop-Reason"
ATTEMPTS = "Memloop-Attempts"
LAST_ERROR = "Memloop-Last-Error"
EVENT_ID = "Memloop-Event-Id"
ORIGINAL_SUBJECT = "Memloop-Original-Subject"
ORIGINAL_SEQUENCE = "Memloop-Original-Sequence"
MSG_ID = "Nats-Msg-Id"
_CARRIED_HEADERS = ("traceparent", "tracestate")
_MAX_HEADER = 512


def _header_value(text: str) -> str:
    """One line, bounded: NATS headers cannot hold newlines and a dead letter is not a log file."""
    return " ".join(text.split())[:_MAX_HEADER]


class DeadLetterPublisher:
    """Files a delivery in the dead-letter stream and terminates the original."""

    def __init__(self, js: JetStreamContext, names: StreamNames, *, publish_timeout: float = 10.0) -> None:
        self._js = js
        self._names = names
        self._timeout = publish_timeout

    async def dead_letter(self, msg: Msg, *, event_id: str, reason: str, attempts: int, last_error: str) -> None:
        """Publish a copy (awaiting the PubAck), then `term()` the original so it is never redelivered.

        If the publish fails, the original is left unacknowledged and comes back after AckWait:
        a dead letter is never dropped on the floor.
        """
        sequence = msg.metadata.sequence.stream
        label = event_id or _header_value((msg.headers or {}).get(MSG_ID, "")) or "unparsed"
        headers = {
            MSG_ID: f"{label}:dlq:{sequence}",
            REASON: _header_value(reason),
            ATTEMPTS: str(attempts),
            LAST_ERROR: _header_value(last_error),
            EVENT_ID: event_id,
            ORIGINAL_SUBJECT: msg.subject,
            ORIGINAL_SEQUENCE: str(sequence),
        }
        headers.update({k: v for k, v in (msg.headers or {}).items() if k in _CARRIED_HEADERS})
        subject = self._names.dlq_subject(self._names.tenant_token(msg.subject))
        await self._js.publish(subject, msg.data, timeout=self._timeout, headers=headers, stream=self._names.dlq_stream)
        await msg.term()


@dataclass(frozen=True)
class DeadLetter:
    """One entry of the dead-letter stream, as `memloop dlq list` shows it."""

    sequence: int
    event_id: str
    reason: str
    attempts: int
    last_error: str
    subject: str
    original_subject: str
    time: datetime.datetime | None
    data: bytes
    headers: Mapping[str, str]

    def age_seconds(self, now: datetime.datetime | None = None) -> float:
        if self.time is None:
            return 0.0
        return max(0.0, ((now or datetime.datetime.now(datetime.UTC)) - self.time).total_seconds())


@dataclass(frozen=True)
class Replayed:
    """A dead letter put back on the learning stream."""

    event_id: str
    dead_letter_sequence: int
    learning_sequence: int
    duplicate: bool


class DeadLetterQueue:
    """Operator's view of the dead-letter stream: list entries, replay them onto the learning stream."""

    def __init__(self, js: JetStreamContext, names: StreamNames) -> None:
        self._js = js
        self._names = names

    async def list(self) -> list[DeadLetter]:
        """Every dead letter, oldest first. An absent dead-letter stream is an empty list."""
        entries: list[DeadLetter] = []
        sequence = 1
        while True:
            try:
                raw = await self._js.get_msg(
                    self._names.dlq_stream, seq=sequence, subject=self._names.dlq_filter, next=True
                )
            except NotFoundError:
                return entries
            headers = {str(k): str(v) for k, v in (raw.headers or {}).items()}
            assert raw.seq is not None
            attempts = 0
            with contextlib.suppress(ValueError):
                attempts = int(headers.get(ATTEMPTS, "0"))
            entries.append(
                DeadLetter(
                    sequence=raw.seq,
                    event_id=headers.get(EVENT_ID, ""),
                    reason=headers.get(REASON, ""),
                    attempts=attempts,
                    last_error=headers.get(LAST_ERROR, ""),
                    subject=raw.subject or "",
                    original_subject=headers.get(ORIGINAL_SUBJECT, ""),
                    time=raw.time,
                    data=raw.data or b"",
                    headers=headers,
                )
            )
            sequence = raw.seq + 1

    async def replay(self, entry: DeadLetter) -> Replayed:
        """Re-publish one dead letter on its original learning subject, then delete it from the DLQ."""
        subject = entry.original_subject or self._names.learning_subject(self._tenant_token(entry.subject))
        label = entry.event_id or f"unparsed-{entry.sequence}"
        headers = {MSG_ID: f"{label}:replay:{entry.sequence}"}
        headers.update({k: v for k, v in entry.headers.items() if k in _CARRIED_HEADERS})
        ack = await self._js.publish(subject, entry.data, headers=headers, stream=self._names.learning_stream)
        with contextlib.suppress(NotFoundError):
            await self._js.delete_msg(self._names.dlq_stream, entry.sequence)
        return Replayed(
            event_id=entry.event_id,
            dead_letter_sequence=entry.sequence,
            learning_sequence=ack.seq,
            duplicate=bool(ack.duplicate),
        )

    def _tenant_token(self, dlq_subject: str) -> str:
        head = f"{self._names.prefix}.dlq."
        return dlq_subject[len(head) :] if dlq_subject.startswith(head) else "_unknown"
