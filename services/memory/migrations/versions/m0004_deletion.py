"""The deletion workflow (issue 6): what m0001_core's `deletions` / `deletion_steps` need beyond it.

- `deletions` gains the reason, trace, the count of memories the acknowledgement made
  unretrievable, and a lease (owner, until) so exactly one replica runs a deletion's own steps at a
  time while any replica can take over one whose runner died (the lease expires).
- `deletion_items` lists, by id only, what a deletion covers, fixed at acknowledgement: the
  memories it deleted (with their index row ids, which replicas check against their FAISS
  indexes), the candidates whose text it scrubs and the learning events whose content, stream
  messages and derived records it removes (with serving's content reference, once known, and
  whether serving confirmed the blob gone). No content, no embeddings.
- `memory_replicas` is the replica registry: every memory process upserts its row at start and
  heartbeats; a deletion waits for each replica that was live when it was acknowledged. Not a
  tenant table (it holds no tenant data), so no row-level security.
- `forget_learned_procedure(id, deletion_id)` is the one way the app role can change a learned
  procedure's content (m0002 grants it lifecycle columns only): it replaces title and action by
  a fixed marker, blanks trigger, rationale and scope, keeps only ids in `details`, and retires
  an active or draft rule (a rule whose content is gone cannot stay in force). SECURITY DEFINER
  with an explicit tenant check, so it scrubs nothing the caller's tenant does not own and
  writes nothing but that marker.

Revision ID: m0004_deletion
Revises: m0003_consolidation
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import context, op

from services.common.migration_helpers import enable_tenant_rls, grant_rw

revision = "m0004_deletion"
down_revision = "m0003_consolidation"
branch_labels = None
depends_on = None

_DDL = """
ALTER TABLE deletions
    ADD COLUMN reason text NOT NULL DEFAULT '',
    ADD COLUMN trace_id text NOT NULL DEFAULT '',
    ADD COLUMN memories_affected integer NOT NULL DEFAULT 0,
    ADD COLUMN lease_owner text NOT NULL DEFAULT '',
    ADD COLUMN lease_until timestamptz;
CREATE INDEX deletions_open ON deletions (created_at) WHERE completed_at IS NULL;
CREATE INDEX deletion_steps_by_location ON deletion_steps (location) WHERE state <> 'done';

CREATE TABLE deletion_items (
    deletion_id text NOT NULL REFERENCES deletions (deletion_id),
    kind text NOT NULL CHECK (kind IN ('memory', 'candidate', 'event')),
    item_id text NOT NULL,
    tenant text NOT NULL,
    user_id text NOT NULL DEFAULT '',
    row_id bigint,
    content_ref text NOT NULL DEFAULT '',
    done boolean NOT NULL DEFAULT false,
    PRIMARY KEY (deletion_id, kind, item_id)
);

CREATE TABLE memory_replicas (
    replica_id text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at timestamptz
);

CREATE FUNCTION forget_learned_procedure(p_id uuid, p_deletion text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
    found_id uuid;
BEGIN
    UPDATE learned_procedures
    SET title = '[forgotten]',
        action = '[forgotten]',
        trigger = '',
        rationale = '',
        scope = '',
        details = jsonb_strip_nulls(jsonb_build_object(
            'review_item_id', details -> 'review_item_id',
            'event_id', details -> 'event_id',
            'user', details -> 'user',
            'forgotten_by', to_jsonb(p_deletion))),
        status = CASE WHEN status IN ('draft', 'active') THEN 'deprecated'::learned_procedure_status
                      ELSE status END,
        updated_at = now()
    WHERE id = p_id
      AND tenant = current_setting('memloop.tenant', true)
      AND NOT (title = '[forgotten]' AND action = '[forgotten]' AND status NOT IN ('draft', 'active'))
    RETURNING id INTO found_id;
    RETURN found_id IS NOT NULL;
END $$;
"""


def upgrade() -> None:
    app_role: str = context.config.attributes["app_role"]
    op.execute(_DDL)
    enable_tenant_rls("deletion_items")
    grant_rw("deletion_items", app_role)
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON memory_replicas TO {app_role}")
    op.execute("REVOKE ALL ON FUNCTION forget_learned_procedure(uuid, text) FROM PUBLIC")
    op.execute(f"GRANT EXECUTE ON FUNCTION forget_learned_procedure(uuid, text) TO {app_role}")


def downgrade() -> None:
    raise NotImplementedError("the memory schema is forward-only")
