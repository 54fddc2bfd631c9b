"""Serving's tables: results, tool outcomes, redacted content, deletion audit, and the outbox.

Two login roles are granted the least they need. The serving app role may insert results, tool
outcomes and outbox rows but never change them; it may delete content (the deletion workflow)
and only append to the deletion audit. The relay role sees nothing but the outbox, which it reads
across tenants (tenant "*"), marks and prunes.

Revision ID: s0001_initial
Revises:
"""

from __future__ import annotations

from alembic import context, op

from services.common.migration_helpers import enable_tenant_rls, ensure_app_role

revision = "s0001_initial"
down_revision = None
branch_labels = None
depends_on = None

RELAY_ROLE = "memloop_relay_app"
_TENANT_TABLES = ("results", "tool_outcomes", "content_blobs", "content_deletions", "outbox")


def upgrade() -> None:
    app_role = str(context.config.attributes.get("app_role", "memloop_serving_app"))
    ensure_app_role(app_role)
    ensure_app_role(RELAY_ROLE)
    op.execute(
        """
        CREATE TABLE results (
            result_id uuid PRIMARY KEY,
            tenant text NOT NULL,
            request_id text NOT NULL,
            user_id text NOT NULL,
            thread text NOT NULL,
            route text NOT NULL,
            procedure_versions jsonb NOT NULL,
            feedback_ref text NOT NULL DEFAULT '',
            reply text NOT NULL,
            content_ref text NOT NULL,
            event_id uuid NOT NULL,
            trace_id text NOT NULL,
            committed_at timestamptz NOT NULL,
            CONSTRAINT results_tenant_request_key UNIQUE (tenant, request_id)
        );
        CREATE TABLE tool_outcomes (
            tenant text NOT NULL,
            request_id text NOT NULL,
            ordinal integer NOT NULL,
            tool text NOT NULL,
            status text NOT NULL,
            ref text NOT NULL DEFAULT '',
            summary text NOT NULL DEFAULT '',
            PRIMARY KEY (tenant, request_id, ordinal),
            FOREIGN KEY (tenant, request_id) REFERENCES results (tenant, request_id)
        );
        CREATE TABLE content_blobs (
            content_ref text PRIMARY KEY,
            tenant text NOT NULL,
            user_id text NOT NULL,
            request_id text NOT NULL,
            from_address text NOT NULL,
            to_address text NOT NULL,
            subject text NOT NULL,
            body text NOT NULL,
            attachments jsonb NOT NULL DEFAULT '[]'::jsonb,
            from_owner boolean NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE content_deletions (
            tenant text NOT NULL,
            content_ref text NOT NULL,
            deletion_id text NOT NULL,
            deleted_at timestamptz NOT NULL,
            existed boolean NOT NULL,
            PRIMARY KEY (tenant, content_ref, deletion_id)
        );
        CREATE TABLE outbox (
            event_id uuid PRIMARY KEY,
            tenant text NOT NULL,
            request_id text NOT NULL,
            trace_id text NOT NULL,
            span_id text NOT NULL DEFAULT '',
            payload bytea NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            claimed_until timestamptz,
            claimed_by text,
            published_at timestamptz,
            stream_seq bigint,
            duplicate boolean NOT NULL DEFAULT false,
            publish_attempts integer NOT NULL DEFAULT 0,
            CONSTRAINT outbox_tenant_request_key UNIQUE (tenant, request_id)
        );
        CREATE INDEX outbox_unpublished_idx ON outbox (created_at) WHERE published_at IS NULL;
        CREATE INDEX outbox_published_idx ON outbox (published_at) WHERE published_at IS NOT NULL;
        """
    )
    for table in _TENANT_TABLES:
        enable_tenant_rls(table)
    op.execute(
        f"""
        GRANT SELECT, INSERT ON results, tool_outcomes, outbox, content_deletions TO {app_role};
        GRANT SELECT, INSERT, DELETE ON content_blobs TO {app_role};
        GRANT SELECT, UPDATE (claimed_until, claimed_by, published_at, stream_seq, duplicate, publish_attempts),
              DELETE ON outbox TO {RELAY_ROLE};
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE outbox, content_deletions, content_blobs, tool_outcomes, results")
