"""Candidates (with their text, for audit and review), review items, processed events, requests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Reason, Sensitivity
from services.memory.core.adapters.repositories.base import Db, Statement, unnest_insert
from services.memory.core.adapters.tables import candidates as c
from services.memory.core.adapters.tables import command_requests as cr
from services.memory.core.adapters.tables import processed_events as pe
from services.memory.core.adapters.tables import review_items as ri
from services.memory.core.domain.review import ReviewItem, ReviewState
from services.memory.core.service.ports import CandidateRecord

_CANDIDATE_TYPES = {
    "candidate_id": "text",
    "tenant": "text",
    "user_id": "text",
    "event_id": "text",
    "ordinal": "int",
    "candidate_key": "text",
    "type": "text",
    "origin": "text",
    "sensitivity": "text",
    "confidence": "float8",
    "intent_key": "text",
    "version": "int",
    "text": "text",
    "outcome": "text",
    "reason_codes": "jsonb",
    "reason_messages": "jsonb",
    "policy_version": "text",
    "trace_id": "text",
    "memory_id": "text",
}
_REVIEW_TYPES = {
    "review_item_id": "text",
    "tenant": "text",
    "user_id": "text",
    "candidate_id": "text",
    "event_id": "text",
    "trace_id": "text",
    "state": "text",
    "created_at": "timestamptz",
}
_PROCESSED_AMONG = (
    "SELECT event_id, outcome, processed_at FROM processed_events"
    " WHERE tenant = %(tenant)s AND event_id = ANY(%(event_ids)s::text[])"
)
_DELETIONS_OF = (
    "SELECT user_id, deletion_id, created_at, completed_at FROM deletions"
    " WHERE tenant = %(tenant)s AND scope = 'user' AND user_id = ANY(%(users)s::text[])"
    " AND (completed_at IS NULL OR (%(oldest)s::timestamptz IS NOT NULL AND created_at >= %(oldest)s::timestamptz))"
    " ORDER BY created_at"
)
"""A user's deletions an event may fall under: still open, or completed after the event's time."""
_PROCESSED_TYPES = {"tenant": "text", "event_id": "text", "user_id": "text", "trace_id": "text", "outcome": "jsonb"}


class SqlCandidateRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def add(self, record: CandidateRecord) -> None:
        decision, candidate = record.decision, record.decision.candidate
        row = dict(
            candidate_id=record.candidate_id,
            tenant=self._db.tenant,
            user_id=record.user,
            event_id=candidate.event_id,
            ordinal=record.ordinal,
            candidate_key=candidate.candidate_key,
            type=candidate.type.value,
            origin=candidate.origin.value,
            sensitivity=candidate.sensitivity.value,
            confidence=candidate.confidence,
            intent_key=candidate.intent_key,
            version=candidate.version,
            text=candidate.text,
            outcome=decision.outcome.value,
            reason_codes=[r.code for r in decision.reasons],
            reason_messages=[r.message for r in decision.reasons],
            policy_version=decision.policy_version,
            trace_id=candidate.trace_id,
            memory_id=record.memory_id or None,
        )
        if self._db.deferring:
            self._db.defer("candidates", row)
        else:
            self._db.execute(insert(c).values(**row))

    def flush(self) -> None:
        self._db.run(self.statements())

    def statements(self) -> list[Statement]:
        """The queued candidates as one INSERT (before review items, which reference them)."""
        return unnest_insert("candidates", _CANDIDATE_TYPES, self._db.take("candidates"))


class SqlReviewRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def add(self, item: ReviewItem) -> None:
        row = dict(
            review_item_id=item.review_item_id,
            tenant=self._db.tenant,
            user_id=item.user,
            candidate_id=item.candidate_id,
            event_id=item.event_id,
            trace_id=item.trace_id,
            state=item.state.value,
            created_at=item.created_at,
        )
        if self._db.deferring:
            self._db.defer("review_items", row)
        else:
            self._db.execute(insert(ri).values(**row))

    def flush(self) -> None:
        self._db.run(self.statements())

    def statements(self) -> list[Statement]:
        return unnest_insert("review_items", _REVIEW_TYPES, self._db.take("review_items"))

    def get(self, review_item_id: str, *, lock: bool = False) -> ReviewItem | None:
        query = self._select().where(ri.c.review_item_id == review_item_id)
        if lock:
            query = query.with_for_update(of=ri)
        row = self._db.execute(query).first()
        return None if row is None else _review_item(row)

    def save_resolution(self, item: ReviewItem, *, trace_id: str) -> None:
        self._db.execute(
            update(ri)
            .where(ri.c.tenant == self._db.tenant, ri.c.review_item_id == item.review_item_id)
            .values(
                state=item.state.value,
                reviewer=item.reviewer,
                resolution_reason=item.resolution_reason,
                resolve_trace_id=trace_id,
                memory_id=item.memory_id or None,
                resolved_at=item.resolved_at,
            )
        )

    def page(
        self, *, user: str, state: ReviewState | None, after_row_id: int, limit: int
    ) -> list[tuple[int, ReviewItem]]:
        query = self._select().where(ri.c.row_id > after_row_id)
        if user:
            query = query.where(ri.c.user_id == user)
        if state is not None:
            query = query.where(ri.c.state == state.value)
        rows = self._db.execute(query.order_by(ri.c.row_id).limit(limit)).all()
        return [(int(row.row_id), _review_item(row)) for row in rows]

    def _select(self) -> Any:
        return (
            select(ri, c)
            .join(c, c.c.candidate_id == ri.c.candidate_id)
            .where(ri.c.tenant == self._db.tenant, c.c.tenant == self._db.tenant)
        )


def _review_item(row: Any) -> ReviewItem:
    mapping = row._mapping
    candidate = Candidate(
        candidate_key=mapping[c.c.candidate_key],
        type=MemoryType(mapping[c.c.type]),
        origin=Origin(mapping[c.c.origin]),
        sensitivity=Sensitivity(mapping[c.c.sensitivity]),
        confidence=float(mapping[c.c.confidence]),
        text=mapping[c.c.text],
        event_id=mapping[c.c.event_id],
        trace_id=mapping[c.c.trace_id],
        intent_key=mapping[c.c.intent_key],
        version=int(mapping[c.c.version]),
    )
    reasons = tuple(
        Reason(code=str(code), message=str(message))
        for code, message in zip(mapping[c.c.reason_codes], mapping[c.c.reason_messages], strict=False)
    )
    return ReviewItem(
        review_item_id=mapping[ri.c.review_item_id],
        tenant=mapping[ri.c.tenant],
        user=mapping[ri.c.user_id],
        decision=Decision(candidate, Outcome(mapping[c.c.outcome]), mapping[c.c.policy_version], reasons),
        state=ReviewState(mapping[ri.c.state]),
        event_id=mapping[ri.c.event_id],
        trace_id=mapping[ri.c.trace_id],
        candidate_id=mapping[ri.c.candidate_id],
        created_at=mapping[ri.c.created_at],
        reviewer=mapping[ri.c.reviewer],
        resolution_reason=mapping[ri.c.resolution_reason],
        memory_id=mapping[ri.c.memory_id] or "",
        resolved_at=mapping[ri.c.resolved_at],
    )


class SqlProcessedEventRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def get(self, event_id: str) -> tuple[dict[str, Any], datetime] | None:
        return self.get_many([event_id]).get(event_id)

    def get_many(self, event_ids: Sequence[str]) -> dict[str, tuple[dict[str, Any], datetime]]:
        """The processed ones among `event_ids`, in one statement (one array parameter)."""
        if not event_ids:
            return {}
        return self.processed_from(self._db.fetch([self.processed_statement(event_ids)])[0])

    def processed_statement(self, event_ids: Sequence[str]) -> Statement:
        return _PROCESSED_AMONG, {"tenant": self._db.tenant, "event_ids": list(dict.fromkeys(event_ids))}

    @staticmethod
    def processed_from(rows: Sequence[Any]) -> dict[str, tuple[dict[str, Any], datetime]]:
        return {row.event_id: (dict(row.outcome), row.processed_at) for row in rows}

    def record(self, event_id: str, *, user: str, trace_id: str, outcome: dict[str, Any]) -> None:
        """Recorded last in ApplyLearning's transaction; a duplicate key here is a bug, not a race."""
        row = dict(tenant=self._db.tenant, event_id=event_id, user_id=user, trace_id=trace_id, outcome=outcome)
        if self._db.deferring:
            self._db.defer("processed_events", row)
        else:
            self._db.execute(insert(pe).values(**row))

    def flush(self) -> None:
        self._db.run(self.statements())

    def statements(self) -> list[Statement]:
        return unnest_insert("processed_events", _PROCESSED_TYPES, self._db.take("processed_events"))

    def forgotten_by(self, user: str, event_time: datetime | None) -> str | None:
        return self.forgotten_among([(user, event_time)])[0]

    def forgotten_among(self, events: Sequence[tuple[str, datetime | None]]) -> list[str | None]:
        """`forgotten_by` for many (user, event time) pairs, from one read of the users' deletions."""
        if not events:
            return []
        return self.forgotten_from(events, self._db.fetch([self.forgotten_statement(events)])[0])

    def forgotten_statement(self, events: Sequence[tuple[str, datetime | None]]) -> Statement:
        times = [event_time for _, event_time in events if event_time is not None]
        return _DELETIONS_OF, {
            "tenant": self._db.tenant,
            "users": sorted({user for user, _ in events}),
            "oldest": min(times) if times else None,
        }

    @staticmethod
    def forgotten_from(events: Sequence[tuple[str, datetime | None]], rows: Sequence[Any]) -> list[str | None]:
        return [
            next(
                (
                    str(row.deletion_id)
                    for row in rows
                    if row.user_id == user
                    and (row.completed_at is None or (event_time is not None and row.created_at >= event_time))
                ),
                None,
            )
            for user, event_time in events
        ]


class SqlRequestRepository:
    def __init__(self, db: Db) -> None:
        self._db = db

    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        row = self._db.execute(
            select(cr.c.operation, cr.c.result).where(cr.c.tenant == self._db.tenant, cr.c.request_id == request_id)
        ).first()
        return None if row is None else (str(row.operation), dict(row.result))

    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None:
        self._db.execute(
            pg_insert(cr).values(tenant=self._db.tenant, request_id=request_id, operation=operation, result=result)
        )
