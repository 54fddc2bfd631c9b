"""The governed learned-procedures store (ADR-0102): one table, three enums, forced tenant RLS.

Design notes a later revision must keep true:
- One active row per (tenant, intent_key) is enforced here by `ux_learned_proc_active_intent`,
  not by the service: two competing active rules for one intent must be impossible even for a
  writer that forgets its lock. The index is not deferrable, so a writer marks the old row
  superseded before the new one becomes active; the lineage foreign keys *are* deferred, so the
  forward link can be written in that same first update, before the successor row exists.
- Versions are unique per intent (`ux_learned_proc_intent_version`), so a lost race in numbering
  fails loudly instead of leaving two "version 2"s.
- A row's content is never edited in place: the app role may update only the lifecycle columns
  (status, version, links, updated_at) and may not delete. History is the superseded chain plus
  the append-only `audit_events`.
- `row_id` is not an ADR column: it only orders rows for keyset pagination, as in `memories`.

Revision ID: m0002_learned_procedures
Revises: m0001_core
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import context, op

from services.common.migration_helpers import enable_tenant_rls

revision = "m0002_learned_procedures"
down_revision = "m0001_core"
branch_labels = None
depends_on = None

_DDL = """
CREATE TYPE learned_procedure_kind AS ENUM ('substantive', 'governance');
CREATE TYPE learned_procedure_status AS ENUM ('draft', 'active', 'superseded', 'deprecated');
CREATE TYPE learned_procedure_source AS ENUM ('officer_teaching', 'sleeptime_consolidation');

CREATE TABLE learned_procedures (
    id uuid PRIMARY KEY,
    row_id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    tenant text NOT NULL,
    intent_key text NOT NULL CHECK (intent_key ~ '^[a-z0-9][a-z0-9_.-]{1,119}$'),
    title text NOT NULL CHECK (title <> ''),
    kind learned_procedure_kind NOT NULL,
    scope text NOT NULL DEFAULT '',
    trigger text NOT NULL DEFAULT '',
    action text NOT NULL CHECK (action <> ''),
    rationale text NOT NULL DEFAULT '',
    details jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    status learned_procedure_status NOT NULL,
    version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    supersedes_id uuid REFERENCES learned_procedures (id) DEFERRABLE INITIALLY DEFERRED,
    superseded_by_id uuid REFERENCES learned_procedures (id) DEFERRABLE INITIALLY DEFERRED,
    source learned_procedure_source NOT NULL DEFAULT 'officer_teaching',
    created_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'superseded') = (superseded_by_id IS NOT NULL)),
    CHECK (supersedes_id IS DISTINCT FROM id AND superseded_by_id IS DISTINCT FROM id)
);
CREATE UNIQUE INDEX ux_learned_proc_active_intent ON learned_procedures (tenant, intent_key)
    WHERE status = 'active';
CREATE UNIQUE INDEX ux_learned_proc_intent_version ON learned_procedures (tenant, intent_key, version);
CREATE INDEX learned_procedures_by_status ON learned_procedures (tenant, status, row_id);
"""


def upgrade() -> None:
    app_role: str = context.config.attributes["app_role"]
    op.execute(_DDL)
    enable_tenant_rls("learned_procedures")
    op.execute(f"GRANT SELECT, INSERT ON learned_procedures TO {app_role}")
    op.execute(
        f"GRANT UPDATE (status, version, supersedes_id, superseded_by_id, updated_at) "
        f"ON learned_procedures TO {app_role}"
    )
    op.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_role}")


def downgrade() -> None:
    raise NotImplementedError("the memory schema is forward-only")
