"""The transactional outbox: learning events waiting for the relay, and their publication evidence."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.common.gen.memloop.v1 import learning_event_pb2
from services.serving.adapters.event_codec import encode_event, without_summaries
from services.serving.domain.model import LearningEventRecord, OutboxState, OutboxStatus

NOTIFY_CHANNEL = "memloop_outbox"


class SqlOutboxRepository:
    def __init__(self, session: Session, tenant: str) -> None:
        self._session = session
        self._tenant = tenant

    def add(self, event: LearningEventRecord, *, span_id: str) -> None:
        self._session.execute(
            text(
                """
                INSERT INTO outbox (event_id, tenant, request_id, trace_id, span_id, payload)
                VALUES (:event_id, :tenant, :request_id, :trace_id, :span_id, :payload)
                """
            ),
            {
                "event_id": event.event_id,
                "tenant": event.tenant,
                "request_id": event.request_id,
                "trace_id": event.trace_id,
                "span_id": span_id,
                "payload": encode_event(event),
            },
        )
        self._session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})

    def get(self, *, event_id: str = "", request_id: str = "") -> OutboxStatus | None:
        where = "event_id = CAST(:key AS uuid)" if event_id else "request_id = :key"
        row = (
            self._session.execute(
                text(
                    f"""
                    SELECT payload, published_at, stream_seq, duplicate, publish_attempts
                    FROM outbox WHERE tenant = :tenant AND {where}
                    """
                ),
                {"tenant": self._tenant, "key": event_id or request_id},
            )
            .mappings()
            .first()
        )
        if row is None:
            return self._pruned(event_id=event_id, request_id=request_id)
        return OutboxStatus(
            payload=bytes(row["payload"]),
            state=OutboxState.PUBLISHED if row["published_at"] is not None else OutboxState.PENDING,
            published_at=row["published_at"],
            stream_sequence=int(row["stream_seq"] or 0),
            duplicate=bool(row["duplicate"]),
            publish_attempts=int(row["publish_attempts"]),
        )

    def _pruned(self, *, event_id: str, request_id: str) -> OutboxStatus | None:
        """A row the relay pruned after publishing it: the event's references, rebuilt from its result.

        Forget by request id (and `memloop trace`) must keep resolving an event after the retention
        period; the result row keeps every id the event carried (never content).
        """
        where = "event_id = CAST(:key AS uuid)" if event_id else "request_id = :key"
        row = (
            self._session.execute(
                text(
                    f"""
                    SELECT event_id, trace_id, request_id, user_id, thread, route, procedure_versions,
                           feedback_ref, content_ref, committed_at
                    FROM results WHERE tenant = :tenant AND {where}
                    """
                ),
                {"tenant": self._tenant, "key": event_id or request_id},
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        event = learning_event_pb2.LearningEvent(
            event_id=str(row["event_id"]),
            trace_id=row["trace_id"],
            request_id=row["request_id"],
            tenant=self._tenant,
            user=row["user_id"],
            thread=row["thread"],
            route=row["route"],
            procedure_versions=dict(row["procedure_versions"] or {}),
            feedback_ref=row["feedback_ref"],
            content_ref=row["content_ref"],
        )
        event.commit_time.FromDatetime(row["committed_at"])
        return OutboxStatus(payload=event.SerializeToString(deterministic=True), state=OutboxState.PUBLISHED)

    def forget_text(self, request_id: str) -> bool:
        row = self._session.execute(
            text("SELECT event_id, payload FROM outbox WHERE tenant = :tenant AND request_id = :request_id"),
            {"tenant": self._tenant, "request_id": request_id},
        ).first()
        if row is None:
            return False
        scrubbed = without_summaries(bytes(row.payload))
        if scrubbed == bytes(row.payload):
            return False
        self._session.execute(
            text("UPDATE outbox SET payload = :payload WHERE tenant = :tenant AND event_id = :event_id"),
            {"tenant": self._tenant, "event_id": row.event_id, "payload": scrubbed},
        )
        return True
