"""A streaming hot standby of an embedded PostgreSQL: `pg_basebackup -R`, then the same `postgres` binary.

The clustered stack (`memloop up --cluster`) runs the primary with this standby beside it. The
standby replays the primary's WAL over a physical replication connection (the `-R` option writes
`primary_conninfo` and `standby.signal`), accepts read-only queries (`hot_standby` is on by
default) and promotes itself never: nothing here fails over. Memory's read-only RPCs may read it
when it is within a stated lag of the primary (`services/memory/core/adapters/standby_reads.py`).

The primary's `initdb --auth=trust` already allows replication connections from 127.0.0.1, and
PostgreSQL's defaults (`wal_level=replica`, `max_wal_senders=10`) are enough for one standby.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import psycopg

from services.common.infra.errors import InfraError
from services.common.infra.postgres import HOST, SUPERUSER, EmbeddedPostgres
from services.common.infra.postgres_runtime import (
    bin_dir,
    make_traversable,
    run_tool,
    unprivileged_account,
)


class StreamingStandby(EmbeddedPostgres):
    """A hot standby of `primary`, its data under `data_dir`, cloned on the first `start()`.

    A data dir that already holds a clone is reused (a restarted standby catches up from the
    primary's WAL). Raises InfraError when the base backup or the server fails.
    """

    def __init__(self, primary: EmbeddedPostgres, data_dir: Path, *, port: int | None = None) -> None:
        super().__init__(
            data_dir,
            port=port,
            durable=primary.durable,
            max_connections=primary.max_connections,
            log_path=data_dir.resolve().parent / "postgres-standby.log",
        )
        self.primary = primary

    def start(self, timeout: float = 60.0) -> StreamingStandby:
        if self.is_running:
            return self
        if not (self.data_dir / "PG_VERSION").exists():
            self._base_backup(timeout)
        super().start(timeout)
        return self

    def _base_backup(self, timeout: float) -> None:
        account = unprivileged_account()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)
        if account is not None:
            make_traversable(self.data_dir.parent)
            os.chown(self.data_dir, account.pw_uid, account.pw_gid)
        argv = [
            str(bin_dir() / "pg_basebackup"),
            "--pgdata",
            str(self.data_dir),
            "--host",
            HOST,
            "--port",
            str(self.primary.port),
            "--username",
            SUPERUSER,
            "--wal-method=stream",
            "--checkpoint=fast",
            "--write-recovery-conf",
            "--no-password",
        ]
        if not self.durable:
            argv.append("--no-sync")
        try:
            result = run_tool(argv, account, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise InfraError(f"PostgreSQL standby cannot start: pg_basebackup took over {timeout:g} s") from exc
        if result.returncode != 0:
            raise InfraError(
                f"PostgreSQL standby cannot start: pg_basebackup from port {self.primary.port} failed "
                f"(status {result.returncode})",
                log_tail="\n".join((result.stdout + result.stderr).strip().splitlines()[-30:]),
            )

    def replay_lsn(self) -> str:
        """The last WAL position this standby has replayed."""
        with psycopg.connect(host=HOST, port=self.port, user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
            row = conn.execute("SELECT pg_last_wal_replay_lsn()::text").fetchone()
        return str(row[0]) if row else ""

    def wait_caught_up(self, timeout: float = 30.0) -> None:
        """Block until the standby has replayed everything the primary had written when called."""
        with psycopg.connect(
            host=HOST, port=self.primary.port, user=SUPERUSER, dbname="postgres", autocommit=True
        ) as conn:
            target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        deadline = time.monotonic() + timeout
        with psycopg.connect(host=HOST, port=self.port, user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
            while True:
                row = conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (str(target[0]) if target else "0/0",)
                ).fetchone()
                if row and row[0]:
                    return
                if time.monotonic() >= deadline:
                    raise InfraError(f"PostgreSQL standby on port {self.port} did not catch up within {timeout:g} s")
                time.sleep(0.05)

    def is_in_recovery(self) -> bool:
        with psycopg.connect(host=HOST, port=self.port, user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
            row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        return bool(row and row[0])
