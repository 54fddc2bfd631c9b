"""PostgreSQL repositories and the unit of work of serving, on SQLAlchemy sessions with plain SQL.

Idempotency is the database's job, not the code's: `results_tenant_request_key` makes
`INSERT … ON CONFLICT DO NOTHING` the single arbiter between concurrent calls with one request id
(the loser waits for the winner's commit and inserts nothing). Row-level security is set per
transaction by the base unit of work.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Self

import psycopg
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import SqlAlchemyUnitOfWork, set_tenant
from services.common.gen.memloop.v1 import learning_event_pb2
from services.serving.adapters import bulk_forget
from services.serving.adapters.event_codec import encode_event, without_summaries
from services.serving.domain.model import (
    AttachmentMeta,
    ContentDeletion,
    Email,
    ForgottenRequest,
    LearningEventRecord,
    NewResult,
    OutboxState,
    OutboxStatus,
    StoredContent,
    StoredResult,
    ToolOutcome,
)

NOTIFY_CHANNEL = "memloop_outbox"

_FORGET_REPLY = {
    "content_ref": "UPDATE results SET reply = '' WHERE tenant = :tenant AND content_ref = :key",
    "event_id": "UPDATE results SET reply = '' WHERE tenant = :tenant AND event_id = CAST(:key AS uuid)",
}


class SqlResultRepository:
    def __init__(self, session: Session, tenant: str) -> None:
        self._session = session
        self._tenant = tenant

    def add_if_new(self, new: NewResult) -> bool:
        r = new.result
        inserted = self._session.execute(
            text(
                """
                INSERT INTO results (result_id, tenant, request_id, user_id, thread, route, procedure_versions,
                                     feedback_ref, reply, content_ref, event_id, trace_id, committed_at)
                VALUES (:result_id, :tenant, :request_id, :user_id, :thread, :route, CAST(:pv AS jsonb),
                        :feedback_ref, :reply, :content_ref, :event_id, :trace_id, :committed_at)
                ON CONFLICT ON CONSTRAINT results_tenant_request_key DO NOTHING
                RETURNING result_id
                """
            ),
            {
                "result_id": r.result_id,
                "tenant": r.tenant,
                "request_id": r.request_id,
                "user_id": new.user,
                "thread": new.thread,
                "route": new.route,
                "pv": json.dumps(new.procedure_versions, sort_keys=True),
                "feedback_ref": new.feedback_ref,
                "reply": r.reply,
                "content_ref": r.content_ref,
                "event_id": r.event_id,
                "trace_id": r.trace_id,
                "committed_at": r.commit_time,
            },
        ).first()
        return inserted is not None

    def add_tool_outcomes(self, request_id: str, outcomes: tuple[ToolOutcome, ...]) -> None:
        if not outcomes:
            return
        self._session.execute(
            text(
                """
                INSERT INTO tool_outcomes (tenant, request_id, ordinal, tool, status, ref, summary)
                VALUES (:tenant, :request_id, :ordinal, :tool, :status, :ref, :summary)
                """
            ),
            [
                {"tenant": self._tenant, "request_id": request_id, "ordinal": i, **_outcome_row(o)}
                for i, o in enumerate(outcomes)
            ],
        )

    def get(self, request_id: str) -> StoredResult | None:
        row = (
            self._session.execute(
                text(
                    """
                    SELECT result_id, request_id, tenant, event_id, trace_id, content_ref, reply, committed_at
                    FROM results WHERE tenant = :tenant AND request_id = :request_id
                    """
                ),
                {"tenant": self._tenant, "request_id": request_id},
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        return StoredResult(
            result_id=str(row["result_id"]),
            request_id=row["request_id"],
            tenant=row["tenant"],
            event_id=str(row["event_id"]),
            trace_id=row["trace_id"],
            content_ref=row["content_ref"],
            reply=row["reply"],
            commit_time=row["committed_at"],
        )

    def forget_text(self, *, content_ref: str = "", event_id: str = "") -> ForgottenRequest | None:
        """Event ids are matched only when they are UUIDs (the use case checks), as the column is one."""
        column, key = ("content_ref", content_ref) if content_ref else ("event_id", event_id)
        row = (
            self._session.execute(
                text(f"{_FORGET_REPLY[column]} RETURNING request_id, content_ref"), {"tenant": self._tenant, "key": key}
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        self._session.execute(
            text("UPDATE tool_outcomes SET summary = '' WHERE tenant = :tenant AND request_id = :request_id"),
            {"tenant": self._tenant, "request_id": row["request_id"]},
        )
        return ForgottenRequest(request_id=row["request_id"], content_ref=row["content_ref"])


class SqlContentRepository:
    def __init__(self, session: Session, tenant: str) -> None:
        self._session = session
        self._tenant = tenant

    def add(self, content: StoredContent) -> None:
        self._session.execute(
            text(
                """
                INSERT INTO content_blobs (content_ref, tenant, user_id, request_id, from_address, to_address,
                                           subject, body, attachments, from_owner)
                VALUES (:content_ref, :tenant, :user_id, :request_id, :from_address, :to_address,
                        :subject, :body, CAST(:attachments AS jsonb), :from_owner)
                """
            ),
            {
                "content_ref": content.content_ref,
                "tenant": content.tenant,
                "user_id": content.user,
                "request_id": content.request_id,
                "from_address": content.email.from_address,
                "to_address": content.email.to_address,
                "subject": content.email.subject,
                "body": content.email.body,
                "attachments": json.dumps([_attachment_row(a) for a in content.attachments]),
                "from_owner": content.from_owner,
            },
        )

    def tenant_known(self) -> bool:
        found = self._session.execute(
            text("SELECT EXISTS (SELECT 1 FROM results WHERE tenant = :tenant)"), {"tenant": self._tenant}
        ).scalar()
        return bool(found)

    def get(self, content_ref: str) -> StoredContent | None:
        row = (
            self._session.execute(
                text("SELECT * FROM content_blobs WHERE tenant = :tenant AND content_ref = :ref"),
                {"tenant": self._tenant, "ref": content_ref},
            )
            .mappings()
            .first()
        )
        if row is None:
            return None
        return StoredContent(
            content_ref=row["content_ref"],
            tenant=row["tenant"],
            user=row["user_id"],
            request_id=row["request_id"],
            email=Email(row["from_address"], row["to_address"], row["subject"], row["body"]),
            attachments=tuple(AttachmentMeta(**a) for a in row["attachments"]),
            from_owner=row["from_owner"],
        )

    def delete(self, content_ref: str) -> bool:
        deleted = self._session.execute(
            text("DELETE FROM content_blobs WHERE tenant = :tenant AND content_ref = :ref RETURNING content_ref"),
            {"tenant": self._tenant, "ref": content_ref},
        ).first()
        return deleted is not None

    def record_deletion(self, deletion: ContentDeletion) -> None:
        self._session.execute(
            text(
                """
                INSERT INTO content_deletions (tenant, content_ref, deletion_id, deleted_at, existed)
                VALUES (:tenant, :content_ref, :deletion_id, :deleted_at, :existed)
                ON CONFLICT DO NOTHING
                """
            ),
            {
                "tenant": deletion.tenant,
                "content_ref": deletion.content_ref,
                "deletion_id": deletion.deletion_id,
                "deleted_at": deletion.deleted_at,
                "existed": deletion.existed,
            },
        )


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


class SqlServingUnitOfWork(SqlAlchemyUnitOfWork):
    """One transaction, one tenant, three repositories.

    The tenant is set lazily: `add_new_request` sends it in the same pipeline as the inserts (one
    round trip on the serving path), and any repository reached through a property sets it first,
    so no statement of this unit of work can run unscoped.
    """

    def __init__(self, session_factory: sessionmaker[Session], tenant: str) -> None:
        super().__init__(session_factory, tenant)
        self._tenant_name = tenant
        self._scoped = False

    def __enter__(self) -> Self:
        super().__enter__()
        return self

    def _scope(self, session: Session) -> None:
        self._scoped = False

    def _ensure_scoped(self) -> None:
        if not self._scoped:
            set_tenant(self.session, self._tenant_name)
            self._scoped = True

    def _open(self, session: Session) -> None:
        self._results = SqlResultRepository(session, self._tenant_name)
        self._contents = SqlContentRepository(session, self._tenant_name)
        self._outbox = SqlOutboxRepository(session, self._tenant_name)

    @property
    def results(self) -> SqlResultRepository:
        self._ensure_scoped()
        return self._results

    @property
    def contents(self) -> SqlContentRepository:
        self._ensure_scoped()
        return self._contents

    @property
    def outbox(self) -> SqlOutboxRepository:
        self._ensure_scoped()
        return self._outbox

    def delete_contents(self, content_refs: list[str], event_ids: list[str], deletion_id: str, now: datetime) -> int:
        self._ensure_scoped()
        return bulk_forget.delete_contents(self.session, self._tenant_name, content_refs, event_ids, deletion_id, now)

    def add_new_request(self, new: NewResult, *, with_event: bool) -> bool:
        """The tenant setting and every row of a new request in one pipelined round trip.

        The statements run in order on the server, so RLS sees the tenant before any insert. Only
        the result's insert is unconditional (`ON CONFLICT DO NOTHING`, the idempotency arbiter);
        each later insert (and the NOTIFY) is guarded by that very result row existing, so a replay
        writes nothing else and the caller reads the first call's result instead. True if inserted.
        """
        conn = self.session.connection().connection.dbapi_connection
        if not isinstance(conn, psycopg.Connection):  # pragma: no cover - the engine is psycopg 3
            raise TypeError("serving needs the psycopg 3 driver")
        rows = _request_rows(new)
        with conn.cursor() as inserted, conn.cursor() as rest:
            with conn.pipeline():
                if not self._scoped:
                    rest.execute("SELECT set_config('memloop.tenant', %s, true)", (self._tenant_name,))
                inserted.execute(_INSERT_RESULT, rows["result"])
                if new.tool_outcomes:
                    rest.executemany(_INSERT_OUTCOME, rows["outcomes"])
                rest.execute(_INSERT_CONTENT, rows["content"])
                if with_event:
                    rest.execute(_INSERT_OUTBOX, rows["outbox"])
                    rest.execute(_NOTIFY, {**rows["guard"], "channel": NOTIFY_CHANNEL})
            self._scoped = True
            return inserted.fetchone() is not None


_GUARD = "WHERE EXISTS (SELECT 1 FROM results WHERE tenant = %(tenant)s AND result_id = CAST(%(result_id)s AS uuid))"
_INSERT_RESULT = """
    INSERT INTO results (result_id, tenant, request_id, user_id, thread, route, procedure_versions,
                         feedback_ref, reply, content_ref, event_id, trace_id, committed_at)
    VALUES (%(result_id)s, %(tenant)s, %(request_id)s, %(user_id)s, %(thread)s, %(route)s, CAST(%(pv)s AS jsonb),
            %(feedback_ref)s, %(reply)s, %(content_ref)s, %(event_id)s, %(trace_id)s, %(committed_at)s)
    ON CONFLICT ON CONSTRAINT results_tenant_request_key DO NOTHING
    RETURNING result_id
"""
_INSERT_OUTCOME = f"""
    INSERT INTO tool_outcomes (tenant, request_id, ordinal, tool, status, ref, summary)
    SELECT %(tenant)s, %(request_id)s, CAST(%(ordinal)s AS integer), %(tool)s, %(status)s, %(ref)s, %(summary)s
    {_GUARD}
"""
_INSERT_CONTENT = f"""
    INSERT INTO content_blobs (content_ref, tenant, user_id, request_id, from_address, to_address,
                               subject, body, attachments, from_owner)
    SELECT %(content_ref)s, %(tenant)s, %(user_id)s, %(request_id)s, %(from_address)s, %(to_address)s,
           %(subject)s, %(body)s, CAST(%(attachments)s AS jsonb), CAST(%(from_owner)s AS boolean)
    {_GUARD}
"""
_INSERT_OUTBOX = f"""
    INSERT INTO outbox (event_id, tenant, request_id, trace_id, span_id, payload)
    SELECT CAST(%(event_id)s AS uuid), %(tenant)s, %(request_id)s, %(trace_id)s, %(span_id)s, CAST(%(payload)s AS bytea)
    {_GUARD}
"""
_NOTIFY = f"SELECT pg_notify(%(channel)s, '') {_GUARD}"


def _request_rows(new: NewResult) -> dict[str, Any]:
    """The parameters of `add_new_request`'s statements, each carrying the guard's keys."""
    r, c, e = new.result, new.content, new.event
    guard = {"tenant": r.tenant, "result_id": r.result_id}
    return {
        "guard": guard,
        "result": {
            **guard,
            "request_id": r.request_id,
            "user_id": new.user,
            "thread": new.thread,
            "route": new.route,
            "pv": json.dumps(new.procedure_versions, sort_keys=True),
            "feedback_ref": new.feedback_ref,
            "reply": r.reply,
            "content_ref": r.content_ref,
            "event_id": r.event_id,
            "trace_id": r.trace_id,
            "committed_at": r.commit_time,
        },
        "outcomes": [
            {**guard, "request_id": r.request_id, "ordinal": i, **_outcome_row(o)}
            for i, o in enumerate(new.tool_outcomes)
        ],
        "content": {
            **guard,
            "content_ref": c.content_ref,
            "user_id": c.user,
            "request_id": c.request_id,
            "from_address": c.email.from_address,
            "to_address": c.email.to_address,
            "subject": c.email.subject,
            "body": c.email.body,
            "attachments": json.dumps([_attachment_row(a) for a in c.attachments]),
            "from_owner": c.from_owner,
        },
        "outbox": {
            **guard,
            "event_id": e.event_id,
            "request_id": e.request_id,
            "trace_id": e.trace_id,
            "span_id": new.span_id,
            "payload": encode_event(e),
        },
    }


def _outcome_row(outcome: ToolOutcome) -> dict[str, Any]:
    return {"tool": outcome.tool, "status": outcome.status, "ref": outcome.ref, "summary": outcome.summary}


def _attachment_row(meta: AttachmentMeta) -> dict[str, Any]:
    return {
        "filename": meta.filename,
        "media_type": meta.media_type,
        "size_bytes": meta.size_bytes,
        "sha256": meta.sha256,
    }
