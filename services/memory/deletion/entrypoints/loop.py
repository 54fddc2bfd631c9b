"""The deletion workflow's thread in every memory process: register, heartbeat, run passes.

A pass runs at start (after the index loaded, before the process serves: a replica coming back
rewrites its persisted index and reports the deletions that waited for it), then whenever a
deletion notice or a local Forget wakes it, and at least every poll interval. One thread per
process, so passes never overlap; a failing pass is logged and the next one retries.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from services.memory.deletion.service.ports import DeletionQueue, ReplicaIndex
from services.memory.deletion.service.workflow import DeletionWorkflow

_log = logging.getLogger(__name__)


class DeletionLoop:
    def __init__(
        self,
        workflow: DeletionWorkflow,
        queue: DeletionQueue,
        replica: ReplicaIndex,
        *,
        poll_seconds: float,
        heartbeat_seconds: float,
        after_pass: Callable[[], object] = lambda: None,
    ) -> None:
        self._workflow = workflow
        self._queue = queue
        self._replica = replica
        self._poll = poll_seconds
        self._heartbeat = heartbeat_seconds
        self._after_pass = after_pass  # the backlog gauges: refreshed whenever a pass ran
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-deletions", daemon=True)

    def start(self) -> None:
        """Register, then bring this replica's files and pending acknowledgements up to date."""
        self._queue.register(self._replica.replica_id)
        self._replica.persist()  # the start-up catch-up may have dropped deleted rows: rewrite the files
        try:
            self._workflow.acknowledge_replica_steps()
        except Exception:
            _log.exception("acknowledging deletions at start failed; the first pass retries")
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def on_notice(self, payload: bytes, headers: Mapping[str, str]) -> None:
        """NATS handler for deletion notices: any of them may concern this replica."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the current pass, report what this replica's files no longer hold, deregister."""
        self._stop.set()
        self._wake.set()
        self._thread.join(30.0)
        try:
            self._workflow.acknowledge_replica_steps()
            self._queue.stopped(self._replica.replica_id)
        except Exception:
            _log.exception("deletion bookkeeping at stop failed")

    def _run(self) -> None:
        last_beat = last_pass = time.monotonic()
        self._wake.set()  # the first pass runs at once: a restarted deleter resumes its deletions
        while not self._stop.is_set():
            woken = self._wake.wait(min(self._poll, self._heartbeat))
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                if time.monotonic() - last_beat >= self._heartbeat:
                    self._queue.heartbeat(self._replica.replica_id)
                    last_beat = time.monotonic()
                if woken or time.monotonic() - last_pass >= self._poll:
                    last_pass = time.monotonic()
                    try:
                        self._workflow.run_pass()
                    finally:  # a failing pass is exactly when the backlog figures must stay current
                        self._report()
            except Exception:
                _log.exception("deletion pass failed; retrying on the next one")

    def _report(self) -> None:
        try:
            self._after_pass()
        except Exception:
            _log.exception("reading the deletion backlog failed")
