"""Core memory schema: memories, provenance, vectors, candidates, review, processed events, audit,
idempotent requests, and the tables the deletion (issue 6) and consolidation (issue 8) workflows fill.

Design notes a later revision must keep true:
- Text lives only in `memories.text`, `candidates.text`/`reason_messages` and
  `review_items.resolution_reason`, so a deletion can scrub it in place; `audit_events` hold ids,
  codes, actor, reasons and the policy version, never content, and are append-only for the app role.
- Provenance is a separate table (`memory_sources`), so one event's provenance can be removed from a
  memory derived from several events.
- Every write to `memories` takes a fresh `change_seq` and records its transaction id
  (`change_xid`) through a trigger, whoever writes: replicas read the feed with both (see
  `adapters/change_feed.py` for why a sequence alone would miss commits that land out of order).

Revision ID: m0001_core
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import context, op

from services.common.migration_helpers import enable_tenant_rls, ensure_app_role, grant_append_only, grant_rw

revision = "m0001_core"
down_revision = None
branch_labels = None
depends_on = None

_TENANT_TABLES_RW = (
    "memories",
    "memory_sources",
    "memory_vectors",
    "candidates",
    "review_items",
    "processed_events",
    "command_requests",
    "deletions",
    "deletion_steps",
    "consolidation_jobs",
)

_DDL = """
CREATE TABLE memory_store_identity (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    database_id text NOT NULL DEFAULT gen_random_uuid()::text,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO memory_store_identity DEFAULT VALUES;

CREATE SEQUENCE memory_change_seq;

CREATE TABLE memories (
    memory_id text PRIMARY KEY,
    row_id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    tenant text NOT NULL,
    user_id text NOT NULL,
    type text NOT NULL CHECK (type IN ('episode', 'preference', 'fact', 'procedural')),
    text text NOT NULL,
    intent_key text NOT NULL DEFAULT '',
    status text NOT NULL CHECK (status IN ('active', 'superseded', 'deprecated', 'deleted')),
    supersedes text REFERENCES memories (memory_id) DEFERRABLE INITIALLY DEFERRED,
    superseded_by text REFERENCES memories (memory_id) DEFERRABLE INITIALLY DEFERRED,
    confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    origin text NOT NULL,
    sensitivity text NOT NULL DEFAULT 'normal',
    candidate_key text NOT NULL DEFAULT '',
    event_id text NOT NULL,
    trace_id text NOT NULL DEFAULT '',
    policy_version text NOT NULL DEFAULT '',
    status_event_id text NOT NULL,
    status_trace_id text NOT NULL DEFAULT '',
    observed_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    change_seq bigint NOT NULL DEFAULT 0,
    change_xid xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE UNIQUE INDEX memories_one_active_intent ON memories (tenant, user_id, intent_key)
    WHERE status = 'active' AND intent_key <> '';
CREATE UNIQUE INDEX memories_one_active_meaning ON memories (tenant, user_id, candidate_key)
    WHERE status = 'active' AND candidate_key <> '';
CREATE INDEX memories_by_user ON memories (tenant, user_id, status, row_id);
CREATE INDEX memories_by_tenant ON memories (tenant, row_id);
CREATE INDEX memories_change_seq ON memories (change_seq);
CREATE INDEX memories_change_xid ON memories (change_xid);

CREATE FUNCTION memories_track_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.change_seq := nextval('memory_change_seq');
    NEW.change_xid := pg_current_xact_id();
    IF TG_OP = 'UPDATE' THEN
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER memories_track_change BEFORE INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_track_change();

CREATE TABLE memory_sources (
    memory_id text NOT NULL REFERENCES memories (memory_id),
    event_id text NOT NULL,
    tenant text NOT NULL,
    trace_id text NOT NULL DEFAULT '',
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (memory_id, event_id)
);
CREATE INDEX memory_sources_by_event ON memory_sources (tenant, event_id);

CREATE TABLE memory_vectors (
    memory_id text NOT NULL REFERENCES memories (memory_id),
    embedder text NOT NULL,
    tenant text NOT NULL,
    dim integer NOT NULL CHECK (dim > 0),
    vector bytea NOT NULL CHECK (length(vector) = 4 * dim),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (memory_id, embedder)
);

CREATE TABLE candidates (
    candidate_id text PRIMARY KEY,
    tenant text NOT NULL,
    user_id text NOT NULL,
    event_id text NOT NULL,
    ordinal integer NOT NULL,
    candidate_key text NOT NULL,
    type text NOT NULL,
    origin text NOT NULL,
    sensitivity text NOT NULL,
    confidence double precision NOT NULL,
    intent_key text NOT NULL DEFAULT '',
    version integer NOT NULL DEFAULT 1,
    text text NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('store', 'review', 'reject')),
    reason_codes jsonb NOT NULL DEFAULT '[]',
    reason_messages jsonb NOT NULL DEFAULT '[]',
    policy_version text NOT NULL,
    trace_id text NOT NULL DEFAULT '',
    memory_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant, event_id, ordinal)
);
CREATE INDEX candidates_by_user ON candidates (tenant, user_id);

CREATE TABLE review_items (
    review_item_id text PRIMARY KEY,
    row_id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    tenant text NOT NULL,
    user_id text NOT NULL,
    candidate_id text NOT NULL REFERENCES candidates (candidate_id),
    event_id text NOT NULL,
    trace_id text NOT NULL DEFAULT '',
    state text NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'deleted')),
    reviewer text NOT NULL DEFAULT '',
    resolution_reason text NOT NULL DEFAULT '',
    resolve_trace_id text NOT NULL DEFAULT '',
    memory_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz
);
CREATE INDEX review_items_by_state ON review_items (tenant, state, row_id);
CREATE INDEX review_items_by_user ON review_items (tenant, user_id, row_id);
CREATE INDEX review_items_by_event ON review_items (tenant, event_id);

CREATE TABLE processed_events (
    tenant text NOT NULL,
    event_id text NOT NULL,
    user_id text NOT NULL,
    trace_id text NOT NULL DEFAULT '',
    outcome jsonb NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, event_id)
);

CREATE TABLE audit_events (
    audit_id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    tenant text NOT NULL,
    action text NOT NULL,
    event_id text NOT NULL DEFAULT '',
    trace_id text NOT NULL DEFAULT '',
    memory_id text NOT NULL DEFAULT '',
    actor text NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_by_event ON audit_events (tenant, event_id, seq);
CREATE INDEX audit_events_by_memory ON audit_events (tenant, memory_id, seq);
CREATE INDEX audit_events_by_tenant ON audit_events (tenant, seq);

CREATE TABLE command_requests (
    tenant text NOT NULL,
    request_id text NOT NULL,
    operation text NOT NULL,
    result jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, request_id)
);

CREATE TABLE deletions (
    deletion_id text PRIMARY KEY,
    tenant text NOT NULL,
    scope text NOT NULL CHECK (scope IN ('memory', 'user', 'event')),
    memory_id text NOT NULL DEFAULT '',
    user_id text NOT NULL DEFAULT '',
    event_id text NOT NULL DEFAULT '',
    source_request_id text NOT NULL DEFAULT '',
    request_id text NOT NULL DEFAULT '',
    requested_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz
);
CREATE UNIQUE INDEX deletions_request ON deletions (tenant, request_id) WHERE request_id <> '';

CREATE TABLE deletion_steps (
    deletion_id text NOT NULL REFERENCES deletions (deletion_id),
    location text NOT NULL,
    tenant text NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    error text NOT NULL DEFAULT '',
    attempts integer NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    PRIMARY KEY (deletion_id, location)
);
CREATE INDEX deletion_steps_open ON deletion_steps (state) WHERE state <> 'done';

CREATE TABLE consolidation_jobs (
    job_id text PRIMARY KEY,
    tenant text NOT NULL,
    user_id text NOT NULL,
    state text NOT NULL CHECK (state IN ('running', 'completed', 'failed')),
    snapshot_ids jsonb NOT NULL DEFAULT '[]',
    report jsonb NOT NULL DEFAULT '{}',
    lease_until timestamptz,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE UNIQUE INDEX consolidation_one_running ON consolidation_jobs (tenant, user_id) WHERE state = 'running';
"""


def upgrade() -> None:
    app_role: str = context.config.attributes["app_role"]
    ensure_app_role(app_role)
    op.execute(_DDL)
    for table in (*_TENANT_TABLES_RW, "audit_events"):
        enable_tenant_rls(table)
    for table in _TENANT_TABLES_RW:
        grant_rw(table, app_role)
    grant_append_only("audit_events", app_role)
    op.execute(f"GRANT SELECT ON memory_store_identity TO {app_role}")
    op.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_role}")


def downgrade() -> None:
    raise NotImplementedError("the memory schema is forward-only")
