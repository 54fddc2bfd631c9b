"""PostgreSQL plumbing shared by the services that own a database (serving, memory).

Two roles per database: migrations run as the owner (the admin URL); services connect as an
app role that is neither owner nor superuser, so FORCE ROW LEVEL SECURITY binds them. The tenant
is set per transaction with set_config(..., true) and vanishes at commit or rollback.
"""

from __future__ import annotations

import select
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import psycopg
from alembic import command
from alembic.config import Config
from psycopg.pq import TransactionStatus
from sqlalchemy import URL, Engine, create_engine, event, exc, make_url, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from services.common.backend_priority import BackendPriority

ALL_TENANTS = "*"


LivenessCheck = Literal["query", "socket"]


def make_engine(
    url: str, *, pool_size: int = 10, application_name: str = "memloop", liveness: LivenessCheck = "query"
) -> Engine:
    """A pooled engine whose checkouts never hand out a connection the server has closed.

    `liveness="query"` is SQLAlchemy's pre-ping: a round trip on every checkout. `"socket"` looks
    at the idle connection's socket instead (`socket_alive`), no round trip: a server that
    restarted or killed the backend has closed it, which makes it readable. Serving uses "socket"
    because the ping was a fifth of its CPU on the request path.
    """
    engine = create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=liveness == "query",
        connect_args={"application_name": application_name},
    )
    if liveness == "socket":
        check_socket_on_checkout(engine)
    follow_thread_priority(engine)
    return engine


def socket_alive(connection: Any) -> bool:
    """Whether an idle pooled psycopg connection can still be used, without talking to the server.

    An idle backend sends nothing unprompted (the pool's connections never LISTEN), so a readable
    socket means the server closed it or is closing it (a restart, pg_terminate_backend, an idle
    timeout: the FATAL notice, then EOF). A rare harmless message (a reported setting changing)
    only costs a reconnect. A silent network loss is not seen here, as a ping would hang on it too.
    """
    if not isinstance(connection, psycopg.Connection) or connection.closed or connection.broken:
        return False
    if connection.info.transaction_status != TransactionStatus.IDLE:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


def check_socket_on_checkout(engine: Engine) -> None:
    """A dead connection found at checkout is replaced by a fresh one (SQLAlchemy's documented
    pessimistic-disconnect hook: DisconnectionError from a checkout listener makes the pool
    invalidate it and connect again), so the caller never sees it."""

    @event.listens_for(engine, "checkout")
    def _check(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: PoolProxiedConnection) -> None:
        if not socket_alive(dbapi_connection):
            raise exc.DisconnectionError("the pooled connection's socket is closed or has unread data")


def follow_thread_priority(engine: Engine) -> None:
    """Each checkout gives the connection's backend (when it runs on this host) the priority of
    the checking-out thread: learning's idle threads never make a normal-priority backend work
    for them (services/common/backend_priority.py says why and where it cannot apply)."""

    @event.listens_for(engine, "connect")
    def _remember_backend(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info["backend"] = BackendPriority.of(dbapi_connection)

    @event.listens_for(engine, "checkout")
    def _follow(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: PoolProxiedConnection) -> None:
        backend = record.info.get("backend")
        if backend is not None:
            backend.follow()


def url_for_role(admin_url: str, role: str, password: str = "") -> str:
    """The same server and database, connecting as `role`.

    Without a password libpq falls back to its own sources (trust, PGPASSWORD, a pgpass file);
    deployments hand the app role's password over as MEMLOOP_<SERVICE>_DB_PASSWORD(_FILE).
    """
    admin = make_url(admin_url)
    # URL.create, not admin.set(password=None): `set` skips None, which kept the owner's password.
    url = URL.create(
        admin.drivername,
        username=role,
        password=password or None,
        host=admin.host,
        port=admin.port,
        database=admin.database,
        query=admin.query,
    )
    return url.render_as_string(hide_password=False)


def run_migrations(admin_url: str, script_location: Path, *, app_role: str) -> None:
    """Upgrade to head as the owner; the migrations create and grant the app role."""
    config = Config()
    config.set_main_option("script_location", str(script_location))
    config.set_main_option("sqlalchemy.url", admin_url.replace("%", "%%"))
    config.attributes["app_role"] = app_role
    command.upgrade(config, "head")


def set_tenant(session: Session, tenant: str) -> None:
    """Scope row-level security to one tenant for the rest of the current transaction."""
    session.execute(text("SELECT set_config('memloop.tenant', :tenant, true)"), {"tenant": tenant})


class SqlAlchemyUnitOfWork:
    """A transaction that rolls back unless `commit()` is called.

    Subclasses add repositories in `_open(session)`. One use case, one unit of work, one commit.
    """

    def __init__(self, session_factory: sessionmaker[Session], tenant: str) -> None:
        self._session_factory = session_factory
        self._tenant = tenant
        self._session: Session | None = None
        self._committed = False

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("unit of work used outside its `with` block")
        return self._session

    def __enter__(self) -> SqlAlchemyUnitOfWork:
        self._session = self._session_factory()
        self._session.begin()
        self._scope(self._session)
        self._committed = False
        self._open(self._session)
        return self

    def _scope(self, session: Session) -> None:
        """Set the tenant now (one round trip). A subclass may defer it to fold it into its first
        statement, provided no statement can run before the tenant is set."""
        set_tenant(session, self._tenant)

    def _open(self, session: Session) -> None:
        """Hook for subclasses to build repositories on the session."""

    def commit(self) -> None:
        self.session.commit()
        self._committed = True

    def rollback(self) -> None:
        self.session.rollback()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if not self._committed:
                self.session.rollback()
        finally:
            self.session.close()
            self._session = None


@contextmanager
def tenant_session(session_factory: sessionmaker[Session], tenant: str) -> Iterator[Session]:
    """A read-only helper: a session scoped to `tenant`, always rolled back."""
    session = session_factory()
    try:
        session.begin()
        set_tenant(session, tenant)
        yield session
    finally:
        session.rollback()
        session.close()
