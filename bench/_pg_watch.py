"""What PostgreSQL's backends and the server as a whole did while a benchmark window ran.

Not a test: the serving A/B's instruments (`bench.bench_serving_ab`). Backends are grouped by the
application name each service's pool sets, so a window's samples say which side waited on what.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator

import psycopg

from services.cli.stack import Stack

SAMPLE_SECONDS = 0.025


def backend_group(application: str) -> str:
    """A client backend's group, by the application name each service's pool sets."""
    if application == "memloop-serving":
        return "serving"
    if application.startswith("memloop-relay"):
        return "relay"
    if application == "memloop-serving-loop":
        return "serving-loop"
    if application.startswith("memloop-memory") and "ingest" in application:
        return "memory-ingest"
    if application.startswith("memloop-memory"):
        return "memory-retrieval"
    return application or "postgres-internal"


class WaitSampler:
    """What each group of backends was doing, every SAMPLE_SECONDS: (group, wait) -> samples, where
    wait is 'CPU' for an active backend with no wait event (running or runnable)."""

    def __init__(self, admin_url: str) -> None:
        self._conninfo = admin_url.replace("postgresql+psycopg://", "postgresql://")
        self.counts: Counter[tuple[str, str]] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            while not self._stop.wait(SAMPLE_SECONDS):
                rows = conn.execute(
                    "SELECT application_name, backend_type, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE state = 'active' AND pid <> pg_backend_pid() OR backend_type <> 'client backend'"
                ).fetchall()
                for application, backend_type, wait_type, wait in rows:
                    group = backend_group(application) if backend_type == "client backend" else backend_type
                    if backend_type != "client backend" and wait_type == "Activity":
                        continue  # a background process sleeping between rounds
                    self.counts[(group, f"{wait_type}:{wait}" if wait_type else "CPU")] += 1

    def describe(self, group: str, top: int = 6) -> str:
        mine = {wait: n for (g, wait), n in self.counts.items() if g == group}
        total = sum(mine.values())
        if not total:
            return f"{group}: no samples"
        parts = [f"{wait} {100 * n / total:.0f}%" for wait, n in sorted(mine.items(), key=lambda kv: -kv[1])[:top]]
        return f"{group} ({total} samples): " + ", ".join(parts)


_SERVER_COUNTERS = (
    "SELECT wal_records, wal_fpi, wal_bytes::bigint, c.num_timed + c.num_requested, c.buffers_written,"
    " c.write_time::bigint, c.sync_time::bigint FROM pg_stat_wal, pg_stat_checkpointer c"
)
_COUNTER_NAMES = (
    "WAL records",
    "full pages",
    "WAL bytes",
    "checkpoints",
    "buffers checkpointed",
    "write ms",
    "sync ms",
)


@contextlib.contextmanager
def server_counters(admin_url: str, label: str) -> Iterator[None]:
    """Prints what the whole server did inside the block: WAL written (and how much of it full-page
    images, which follow a checkpoint), checkpoints and their writes and flushes."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        before = conn.execute(_SERVER_COUNTERS).fetchone()
        yield
        after = conn.execute(_SERVER_COUNTERS).fetchone()
    assert before is not None and after is not None
    deltas = ", ".join(f"{name} {int(b) - int(a):,}" for name, a, b in zip(_COUNTER_NAMES, before, after, strict=True))
    print(f"     {label} server: {deltas}", flush=True)


def admin_url(stack: Stack) -> str:
    """The embedded server's admin connection, as libpq takes it."""
    postgres = stack.embedded_postgres
    assert postgres is not None
    return postgres.admin_url.replace("postgresql+psycopg://", "postgresql://")


def backend_pids(stack: Stack, groups: tuple[str, ...]) -> list[int]:
    """The client backends of `groups` now connected."""
    with psycopg.connect(admin_url(stack), autocommit=True) as conn:
        rows = conn.execute("SELECT pid, application_name FROM pg_stat_activity WHERE backend_type = 'client backend'")
        return [pid for pid, application in rows.fetchall() if backend_group(application) in groups]
