"""Redacted content blobs, read by reference (one or many per call) and deleted for forgetting."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.serving.adapters.postgres.rows import attachment_row
from services.serving.domain.model import AttachmentMeta, ContentDeletion, Email, StoredContent


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
                "attachments": json.dumps([attachment_row(a) for a in content.attachments]),
                "from_owner": content.from_owner,
            },
        )

    def tenant_known(self) -> bool:
        found = self._session.execute(
            text("SELECT EXISTS (SELECT 1 FROM results WHERE tenant = :tenant)"), {"tenant": self._tenant}
        ).scalar()
        return bool(found)

    def get(self, content_ref: str) -> StoredContent | None:
        return self.get_many([content_ref]).get(content_ref)

    def get_many(self, content_refs: Sequence[str]) -> dict[str, StoredContent]:
        """The blobs that exist among `content_refs`, by reference, in one statement."""
        rows = (
            self._session.execute(
                text("SELECT * FROM content_blobs WHERE tenant = :tenant AND content_ref = ANY(CAST(:refs AS text[]))"),
                {"tenant": self._tenant, "refs": list(dict.fromkeys(content_refs))},
            )
            .mappings()
            .all()
        )
        return {row["content_ref"]: _stored(row) for row in rows}

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


def _stored(row: Any) -> StoredContent:
    return StoredContent(
        content_ref=row["content_ref"],
        tenant=row["tenant"],
        user=row["user_id"],
        request_id=row["request_id"],
        email=Email(row["from_address"], row["to_address"], row["subject"], row["body"]),
        attachments=tuple(AttachmentMeta(**a) for a in row["attachments"]),
        from_owner=row["from_owner"],
    )
