"""The replica's background consumer: change notices from peers, a periodic poll, periodic persistence.

A notice only wakes the loop; what is applied always comes from the database's change feed, so a
lost, duplicated or reordered notice changes nothing but latency.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping

from services.memory.core.service.index_sync import IndexSynchroniser

_log = logging.getLogger(__name__)


class ReplicaSync:
    def __init__(
        self,
        sync: IndexSynchroniser,
        *,
        poll_seconds: float,
        persist_seconds: float,
        on_thread_start: Callable[[], object] = lambda: None,
    ) -> None:
        """`on_thread_start` runs first on the sync thread: bootstrap passes idle database backends
        for it (issue 15) and keeps the thread itself at normal priority. The thread takes the
        index's exclusive lock and the GIL; lowered to SCHED_IDLE (as it was), the kernel parked it
        holding them on a busy machine and SearchMemories waited behind its 2-second poll."""
        self._sync = sync
        self._on_thread_start = on_thread_start
        self._poll = poll_seconds
        self._persist = persist_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-replica-sync", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(10.0)

    def on_notice(self, payload: bytes, headers: Mapping[str, str]) -> None:
        """NATS handler for `<prefix>.memory.changes`: wake up unless the notice is our own."""
        try:
            notice = json.loads(payload)
        except ValueError:
            _log.warning("ignoring a malformed change notice")
            return
        if notice.get("replica") != self._sync.replica_id:
            self._wake.set()

    def _run(self) -> None:
        self._on_thread_start()
        last_persist = time.monotonic()
        while not self._stop.is_set():
            self._wake.wait(self._poll)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                applied = self._sync.catch_up()
                if applied:
                    _log.info(
                        "replica %s applied %d changes; watermark %d",
                        self._sync.replica_id,
                        applied,
                        self._sync.watermark,
                    )
                if time.monotonic() - last_persist >= self._persist:
                    self._sync.persist()
                    last_persist = time.monotonic()
            except Exception:
                _log.exception("replica %s sync failed; retrying on the next poll", self._sync.replica_id)
