"""SQL snippets shared by the serving and memory migrations: the app role and forced RLS."""

from __future__ import annotations

from alembic import op


def ensure_app_role(role: str) -> None:
    """Create the login role the service connects as (cluster-wide, so idempotent) and grant usage."""
    op.execute(
        f"""
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
            CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
          END IF;
        EXCEPTION
          -- two databases migrating at once on a fresh cluster: the other one created it first
          WHEN duplicate_object OR unique_violation THEN NULL;
        END $$;
        """
    )
    op.execute(f"GRANT USAGE ON SCHEMA public TO {role}")


def enable_tenant_rls(table: str) -> None:
    """Forced row-level security on `tenant`: a session sees only the tenant it set.

    The value "*" is reserved for the services' own cross-tenant maintenance paths (relay,
    index replicas, deletion resumption), which set it explicitly.
    """
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"""
        CREATE POLICY {table}_tenant_isolation ON {table}
        USING (tenant = current_setting('memloop.tenant', true) OR current_setting('memloop.tenant', true) = '*')
        WITH CHECK (tenant = current_setting('memloop.tenant', true) OR current_setting('memloop.tenant', true) = '*')
        """
    )


def grant_rw(table: str, role: str) -> None:
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {role}")


def grant_append_only(table: str, role: str) -> None:
    """Audit tables: the app role may read and insert, never update or delete."""
    op.execute(f"GRANT SELECT, INSERT ON {table} TO {role}")
