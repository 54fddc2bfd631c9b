"""Domain values as the column values serving stores them (shared by the repositories and the pipelined insert)."""

from __future__ import annotations

from typing import Any

from services.serving.domain.model import AttachmentMeta, ToolOutcome


def outcome_row(outcome: ToolOutcome) -> dict[str, Any]:
    return {"tool": outcome.tool, "status": outcome.status, "ref": outcome.ref, "summary": outcome.summary}


def attachment_row(meta: AttachmentMeta) -> dict[str, Any]:
    return {
        "filename": meta.filename,
        "media_type": meta.media_type,
        "size_bytes": meta.size_bytes,
        "sha256": meta.sha256,
    }
