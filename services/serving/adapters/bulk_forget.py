"""Serving's side of forgetting many blobs at once (a user's): one statement per table.

The single `DeleteContent` runs about six statements per blob; a user with 10,000 memories made
that 60,000 statements over 10,000 calls. Here the same effects are set-based: blank the replies
(finding the requests and the blobs of the events named), blank their tool outcome summaries,
delete the blobs, rewrite the outbox payloads without their summaries, and audit every blob, each
as one statement over arrays. Runs inside the caller's tenant-scoped transaction (RLS applies).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.serving.adapters.event_codec import without_summaries

_BLANK_REPLIES = """
UPDATE results SET reply = ''
WHERE tenant = :tenant AND (content_ref = ANY(CAST(:refs AS text[])) OR event_id = ANY(CAST(:events AS uuid[])))
RETURNING request_id, content_ref, event_id
"""
_BLANK_OUTCOMES = (
    "UPDATE tool_outcomes SET summary = '' WHERE tenant = :tenant AND request_id = ANY(CAST(:requests AS text[]))"
)
_DELETE_BLOBS = """
DELETE FROM content_blobs WHERE tenant = :tenant AND content_ref = ANY(CAST(:refs AS text[])) RETURNING content_ref
"""
_OUTBOX_PAYLOADS = (
    "SELECT event_id, payload FROM outbox WHERE tenant = :tenant AND request_id = ANY(CAST(:requests AS text[]))"
)
_REWRITE_PAYLOADS = """
UPDATE outbox o SET payload = u.payload
FROM unnest(CAST(:ids AS uuid[]), CAST(:payloads AS bytea[])) AS u(event_id, payload)
WHERE o.tenant = :tenant AND o.event_id = u.event_id
"""
_AUDIT = """
INSERT INTO content_deletions (tenant, content_ref, deletion_id, deleted_at, existed)
SELECT :tenant, a.ref, :deletion_id, :now, a.existed
FROM unnest(CAST(:refs AS text[]), CAST(:existed AS boolean[])) AS a(ref, existed)
ON CONFLICT DO NOTHING
"""


def delete_contents(
    session: Session, tenant: str, content_refs: list[str], event_ids: list[str], deletion_id: str, now: datetime
) -> int:
    """See `ServingUnitOfWork.delete_contents`. Event ids must be canonical UUIDs (the use case checks)."""
    scope = {"tenant": tenant}
    requests = session.execute(text(_BLANK_REPLIES), {**scope, "refs": content_refs, "events": event_ids}).all()
    request_ids = sorted({r.request_id for r in requests})
    refs = list(dict.fromkeys([*content_refs, *(r.content_ref for r in requests if r.content_ref)]))
    if request_ids:
        session.execute(text(_BLANK_OUTCOMES), {**scope, "requests": request_ids})
    existed = {row.content_ref for row in session.execute(text(_DELETE_BLOBS), {**scope, "refs": refs})}
    if request_ids:
        payloads = session.execute(text(_OUTBOX_PAYLOADS), {**scope, "requests": request_ids}).all()
        changed = [(str(p.event_id), without_summaries(bytes(p.payload))) for p in payloads]
        changed = [(e, new) for (e, new), p in zip(changed, payloads, strict=True) if new != bytes(p.payload)]
        if changed:
            session.execute(
                text(_REWRITE_PAYLOADS), {**scope, "ids": [e for e, _ in changed], "payloads": [p for _, p in changed]}
            )
    if refs:
        session.execute(
            text(_AUDIT),
            {**scope, "deletion_id": deletion_id, "now": now, "refs": refs, "existed": [r in existed for r in refs]},
        )
    return len(existed)
