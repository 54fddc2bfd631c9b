"""Alembic environment of the memory database.

Run through `services.common.db.run_migrations` with the owner's URL; the app role's name
arrives in `config.attributes["app_role"]` so every revision can grant to it. A session-level
advisory lock serialises replicas that start together against one database.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

_MIGRATION_LOCK = 7_305_001  # any constant unique to this database's migrations

config = context.config
if "app_role" not in config.attributes:
    raise SystemExit("memory migrations need config.attributes['app_role'] (use services.common.db.run_migrations)")


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("memory migrations need sqlalchemy.url")
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _MIGRATION_LOCK})
        connection.commit()
        try:
            context.configure(connection=connection, transaction_per_migration=True)
            with context.begin_transaction():
                context.run_migrations()
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _MIGRATION_LOCK})
            connection.commit()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("memory migrations run online only")
run_migrations_online()
