"""Consolidation jobs (issue 8): the states and columns the job's record needs beyond m0001_core.

m0001_core created `consolidation_jobs` (one running row per user by partial unique index, RLS,
grants). The job adds:
- the `skipped_busy` state, so a second job for a busy user leaves a record a caller can Get;
- `seq`, an identity for keyset pagination (newest first);
- the report's figures as columns (queried by the scheduler and operators, not buried in JSON),
  the error of a failed job, its trace id, who asked, and the snapshot's size;
- an index for "jobs of one user, newest first".

Mutual exclusion is a session-level advisory lock held by the job's own connection (see
`adapters/consolidation_repository.py`), not `lease_until`: a lock dies with its connection, so a
killed process never leaves a lease to expire. The running row is the record, the lock the truth.

Revision ID: m0003_consolidation
Revises: m0002_learned_procedures
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import context, op

revision = "m0003_consolidation"
down_revision = "m0002_learned_procedures"
branch_labels = None
depends_on = None

_DDL = """
ALTER TABLE consolidation_jobs DROP CONSTRAINT consolidation_jobs_state_check;
ALTER TABLE consolidation_jobs ADD CONSTRAINT consolidation_jobs_state_check
    CHECK (state IN ('running', 'completed', 'failed', 'skipped_busy'));
ALTER TABLE consolidation_jobs
    ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    ADD COLUMN kept integer NOT NULL DEFAULT 0,
    ADD COLUMN retired integer NOT NULL DEFAULT 0,
    ADD COLUMN untouched integer NOT NULL DEFAULT 0,
    ADD COLUMN deferred integer NOT NULL DEFAULT 0,
    ADD COLUMN sent_to_review integer NOT NULL DEFAULT 0,
    ADD COLUMN snapshot_size integer NOT NULL DEFAULT 0,
    ADD COLUMN error text NOT NULL DEFAULT '',
    ADD COLUMN trace_id text NOT NULL DEFAULT '',
    ADD COLUMN requested_by text NOT NULL DEFAULT '',
    ADD COLUMN trigger text NOT NULL DEFAULT 'operator';
CREATE INDEX consolidation_jobs_by_user ON consolidation_jobs (tenant, user_id, seq);
CREATE INDEX consolidation_jobs_running ON consolidation_jobs (started_at) WHERE state = 'running';
"""


def upgrade() -> None:
    app_role: str = context.config.attributes["app_role"]
    op.execute(_DDL)
    # RLS (forced) and read/write grants on consolidation_jobs come from m0001_core; the identity
    # column's sequence is new, so grant it like every other sequence of the schema.
    op.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_role}")


def downgrade() -> None:
    raise NotImplementedError("the memory schema is forward-only")
