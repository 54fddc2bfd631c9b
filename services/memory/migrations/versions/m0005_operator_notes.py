"""Operator notes: free-text reasons of reviewers and operators, out of the append-only audit.

A reason ("why I deprecated this", "why I denied that") can carry personal data, and the audit is
append-only for the app role, so a forget could never reach it there. The audit row now keeps only
the note's id; the text lives here, tied to the memory, review item or procedure it was about, and
a deletion removes it with them.

Revision ID: m0005_operator_notes
Revises: m0004_deletion
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import context, op

from services.common.migration_helpers import enable_tenant_rls, grant_rw

revision = "m0005_operator_notes"
down_revision = "m0004_deletion"
branch_labels = None
depends_on = None

_DDL = """
CREATE TABLE operator_notes (
    note_id text PRIMARY KEY,
    tenant text NOT NULL,
    memory_id text NOT NULL DEFAULT '',
    review_item_id text NOT NULL DEFAULT '',
    procedure_id text NOT NULL DEFAULT '',
    text text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_notes_memory ON operator_notes (tenant, memory_id) WHERE memory_id <> '';
CREATE INDEX operator_notes_review ON operator_notes (tenant, review_item_id) WHERE review_item_id <> '';
CREATE INDEX operator_notes_procedure ON operator_notes (tenant, procedure_id) WHERE procedure_id <> '';
"""


def upgrade() -> None:
    app_role: str = context.config.attributes["app_role"]
    op.execute(_DDL)
    enable_tenant_rls("operator_notes")
    grant_rw("operator_notes", app_role)


def downgrade() -> None:
    op.execute("DROP TABLE operator_notes")
