"""Alembic environment of serving's database, run by the service at start-up as the owner.

Serialised with a transaction-scoped advisory lock, so several serving processes (or a relay
started alongside) can start at once; the version table is serving's own, so serving and memory
can share one database when an operator points both at the same URL.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

_LOCK_KEY = 0x6D656D6C6F6F7001  # "memloop" + 1: serving's migration lock
VERSION_TABLE = "alembic_version_serving"

_config = context.config
_engine = create_engine(_config.get_main_option("sqlalchemy.url") or "", poolclass=pool.NullPool)
with _engine.connect() as connection:
    context.configure(connection=connection, version_table=VERSION_TABLE, transactional_ddl=True)
    with context.begin_transaction():
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        context.run_migrations()
_engine.dispose()
