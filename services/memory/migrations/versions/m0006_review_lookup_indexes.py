"""Indexes for finding a candidate by its key and the review items of a candidate.

A consolidation job asks, for every contender of every contradiction, whether a review item for
that candidate key already exists. Without these indexes each question scanned every candidate of
the user (and, for the join, the review items): a job over one user with 100,000 memories spent
minutes in its write-back on those scans. `review_items (candidate_id)` also serves the foreign
key's check when a deletion removes candidates.

Revision ID: m0006_review_lookup_indexes
Revises: m0005_operator_notes
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "m0006_review_lookup_indexes"
down_revision = "m0005_operator_notes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX candidates_by_key ON candidates (tenant, user_id, candidate_key)")
    op.execute("CREATE INDEX review_items_by_candidate ON review_items (candidate_id)")


def downgrade() -> None:
    op.execute("DROP INDEX review_items_by_candidate")
    op.execute("DROP INDEX candidates_by_key")
