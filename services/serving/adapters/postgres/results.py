"""Results and their tool outcomes: what serving answered each request.

Idempotency is the database's job, not the code's: `results_tenant_request_key` makes
`INSERT … ON CONFLICT DO NOTHING` the single arbiter between concurrent calls with one request id
(the loser waits for the winner's commit and inserts nothing).
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.serving.adapters.postgres.rows import outcome_row, result_row
from services.serving.domain.model import ForgottenRequest, NewResult, StoredResult, ToolOutcome

_FORGET_REPLY = {
    "content_ref": "UPDATE results SET reply = '' WHERE tenant = :tenant AND content_ref = :key",
    "event_id": "UPDATE results SET reply = '' WHERE tenant = :tenant AND event_id = CAST(:key AS uuid)",
}


class SqlResultRepository:
    def __init__(self, session: Session, tenant: str) -> None:
        self._session = session
        self._tenant = tenant

    def add_if_new(self, new: NewResult) -> bool:
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
            result_row(new),
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
                {"tenant": self._tenant, "request_id": request_id, "ordinal": i, **outcome_row(o)}
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
