"""Domain values as the column values serving stores them (shared by the repositories and the pipelined insert)."""

from __future__ import annotations

import json
from typing import Any

from services.serving.domain.model import AttachmentMeta, NewResult, ToolOutcome


def result_row(new: NewResult) -> dict[str, Any]:
    """The `results` row of a new request (procedure versions as canonical JSON for a jsonb cast)."""
    r = new.result
    return {
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
    }


def outcome_row(outcome: ToolOutcome) -> dict[str, Any]:
    return {"tool": outcome.tool, "status": outcome.status, "ref": outcome.ref, "summary": outcome.summary}


def attachment_row(meta: AttachmentMeta) -> dict[str, Any]:
    return {
        "filename": meta.filename,
        "media_type": meta.media_type,
        "size_bytes": meta.size_bytes,
        "sha256": meta.sha256,
    }
