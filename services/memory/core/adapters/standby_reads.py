"""Read-only RPCs served from a streaming standby, but only while it is provably within a lag bound.

The clustered deployment gives memory a hot standby of its database (MEMLOOP_MEMORY_STANDBY_DATABASE_URL).
GetMemory, ListMemories and GetLineage may read it (SearchMemories confirms its hits on the
primary, through the active-row reader); every write,
ApplyLearning's conflict reads, the change feed, deletions, audit and review listings and
GetProcessedEvent stay on the primary (read-your-writes for the loop and its operators).

The bound, MEMLOOP_MEMORY_STANDBY_MAX_LAG_SECONDS (`max_lag`), is enforced, not hoped for: a
sampler thread reads the primary's WAL position, then the standby's replay position, every
`sample_seconds`. When the standby has replayed past the primary's position sampled at time t,
every transaction committed before t is visible on it, from then on (replay only moves forward),
so reads may go to the standby until t + max_lag. Past that, or when a sample fails, reads go to
the primary. Hence: a read served by the standby at time r sees every commit made before
r - max_lag. It may miss commits of the last max_lag seconds, never older ones, and a forgotten
memory can be returned by it for at most max_lag seconds after the forget committed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

from prometheus_client import Counter
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.service.ports import MemoryUnitOfWork, UnitOfWorkFactory

_log = logging.getLogger(__name__)
READS = Counter("memloop_memory_read_source_total", "Read-only RPC transactions, by database served from", ["source"])
_PRIMARY_LSN = text("SELECT pg_current_wal_lsn()::text")
_STANDBY_LSN = text("SELECT pg_last_wal_replay_lsn()::text")


def lsn_value(lsn: str) -> int:
    """A PostgreSQL LSN (`16/B374D848`) as an integer, comparable."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) | int(low, 16)


class StandbyFreshness:
    """Whether reads may go to the standby now (`fresh()`), kept by a daemon sampler thread."""

    def __init__(
        self, primary: Engine, standby: Engine, *, max_lag_seconds: float, sample_seconds: float = 0.1
    ) -> None:
        if max_lag_seconds <= sample_seconds:
            raise ValueError("the standby lag bound must be longer than the sampling interval")
        self._primary = primary
        self._standby = standby
        self._max_lag = max_lag_seconds
        self._sample = sample_seconds
        self._samples: deque[tuple[float, int]] = deque()  # (monotonic time, primary LSN), oldest first
        self._fresh_until = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-standby-lag", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def fresh(self) -> bool:
        return time.monotonic() < self._fresh_until

    def sample_once(self) -> None:
        """Sample the primary, then the standby; extend the freshness deadline if the standby caught up."""
        now = time.monotonic()
        with self._primary.connect() as conn:
            primary_lsn = lsn_value(str(conn.execute(_PRIMARY_LSN).scalar_one()))
        self._samples.append((now, primary_lsn))
        with self._standby.connect() as conn:
            replayed = conn.execute(_STANDBY_LSN).scalar_one()
        if replayed is None:  # not a standby (promoted, or misconfigured): never read it as one
            self._fresh_until = 0.0
            return
        standby_lsn = lsn_value(str(replayed))
        caught_up_at = max((t for t, lsn in self._samples if lsn <= standby_lsn), default=None)
        if caught_up_at is not None:
            self._fresh_until = max(self._fresh_until, caught_up_at + self._max_lag)
        while self._samples and self._samples[0][0] < now - self._max_lag - 1.0:
            self._samples.popleft()

    def _run(self) -> None:
        while not self._stop.wait(self._sample):
            try:
                self.sample_once()
            except Exception as exc:  # the deadline simply is not extended: reads fall back to the primary
                _log.debug("standby lag sample failed: %s", exc)


def standby_unit_of_work(
    primary: sessionmaker[Session], standby: sessionmaker[Session], freshness: StandbyFreshness
) -> UnitOfWorkFactory:
    """A unit-of-work factory for read-only use cases: the standby while fresh, else the primary."""

    def unit_of_work(tenant: str) -> MemoryUnitOfWork:
        source = "standby" if freshness.fresh() else "primary"
        READS.labels(source).inc()
        return SqlMemoryUnitOfWork(standby if source == "standby" else primary, tenant)

    return unit_of_work
