"""The relays' wake-up, off the request path: one NOTIFY for every commit since the last one.

A request that committed a learning event calls `RelayWaker.wake()`, which only sets a flag (no
I/O, no lock held across anything); a thread of the waker's own, on a database connection of its
own, sends one `pg_notify` for all the wakes since its previous one. Why: the NOTIFY in a
transaction of its own after each commit (MEMLOOP_SERVING_NOTIFY=after) still cost each request a
round trip and a commit on its own thread, 20 % of serving's samples at 50 req/s with the loop.

Promised: a wake is followed by a NOTIFY sent after it (the flag is cleared *before* the NOTIFY is
sent, so a wake during a send causes one more send), so the relays are woken after the last commit;
the first wake after a quiet spell is sent at once, and later ones at most every `min_interval`
(a relay woken during a steady stream lingers up to 250 ms anyway, `MEMLOOP_RELAY_CLAIM_LINGER_MS`).
Not promised: that a NOTIFY arrives. Nothing depends on it: a failed send is logged and the connection reopened, and
the relays' backstop poll (`MEMLOOP_RELAY_POLL_SECONDS`, 5 by default) finds every committed row.

The NOTIFY commits with `synchronous_commit=off`: it records nothing, so it need not wait for its
WAL flush, and PostgreSQL's cluster-wide notify lock is held only for the commit itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL

_log = logging.getLogger(__name__)

Connect = Callable[[], psycopg.Connection[Any]]

_NOTIFY = "SELECT pg_notify(%s, '')"
RETRY_SECONDS = 1.0


def connect_for_notify(conninfo: str) -> Connect:
    """Connections for the waker: autocommit (each NOTIFY its own transaction), flush not awaited."""

    def connect() -> psycopg.Connection[Any]:
        return psycopg.connect(
            conninfo,
            autocommit=True,
            application_name="memloop-serving-notify",
            options="-c synchronous_commit=off",
        )

    return connect


class RelayWaker:
    """Coalesces the relays' wake-ups: `wake()` from any thread, one NOTIFY per batch of them.

    `start()` opens nothing: the connection is opened by the waker's thread at its first send.
    `stop()` sends what is pending, then closes the connection (idempotent).
    """

    def __init__(self, connect: Connect, *, min_interval: float = 0.0) -> None:
        self._connect = connect
        self._min_interval = min_interval
        self._pending = threading.Event()
        self._stopping = False
        self._owed_at_stop = False
        self._thread = threading.Thread(target=self._run, name="serving-relay-waker", daemon=True)
        self.sent = 0
        """NOTIFYs sent so far (for tests and benchmarks)."""

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Ask for a NOTIFY after this call: returns at once, never raises, never does I/O."""
        if not self._pending.is_set():
            self._pending.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Send a last NOTIFY if a wake is still owed one, then close the connection."""
        self._owed_at_stop = self._pending.is_set()
        self._stopping = True
        self._pending.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        last = float("-inf")
        try:
            while True:
                self._pending.wait()
                if self._stopping:
                    if self._owed_at_stop:
                        conn = self._send(conn)
                    return
                wait = last + self._min_interval - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # the wakes of the interval join this one
                self._pending.clear()  # before the send: a wake from now on gets a send of its own
                conn = self._send(conn)
                last = time.monotonic()
        finally:
            if conn is not None:
                conn.close()

    def _send(self, conn: psycopg.Connection[Any] | None) -> psycopg.Connection[Any] | None:
        try:
            if conn is None or conn.closed:
                conn = self._connect()
            conn.execute(_NOTIFY, (NOTIFY_CHANNEL,))
            self.sent += 1
            return conn
        except Exception as exc:  # the thread must outlive any failure: the next wakes need it
            _log.warning("waking the relays failed (%s); their poll will find the events", exc)
            if conn is not None:
                conn.close()
            if not self._stopping:
                time.sleep(RETRY_SECONDS)
                self._pending.set()  # the wakes that failed are still owed
            return None
