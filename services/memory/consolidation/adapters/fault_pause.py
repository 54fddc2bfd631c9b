"""TEST-ONLY: hold a consolidation job at a named phase until a test lets it go.

Enabled only when MEMLOOP_FAULT_CONSOLIDATION_PAUSE_DIR names a folder (never in production: the
default hook is `no_pause`). At each phase the job writes `reached-<phase>` (its job id inside),
then waits while `hold-<phase>` exists. A test that creates the hold file, waits for the marker,
acts (lands a turn, kills the process) and removes the hold can place a turn at an exact point of
a job running in a real process. A hold never outlives `max_wait_seconds`, so a forgotten file
cannot wedge a job forever.
"""

from __future__ import annotations

import time
from pathlib import Path

from services.memory.consolidation.service.ports import ConsolidationJob, JobPhase


class FilePauseHook:
    def __init__(self, folder: Path, *, max_wait_seconds: float = 120.0, poll_seconds: float = 0.01) -> None:
        self._folder = folder
        self._max_wait = max_wait_seconds
        self._poll = poll_seconds

    def __call__(self, phase: JobPhase, job: ConsolidationJob) -> None:
        self._folder.mkdir(parents=True, exist_ok=True)
        marker = self._folder / f"reached-{phase.value}"
        partial = marker.with_suffix(".tmp")
        partial.write_text(job.job_id)
        partial.replace(marker)  # atomic: a reader never sees an empty marker
        hold = self._folder / f"hold-{phase.value}"
        deadline = time.monotonic() + self._max_wait
        while hold.exists() and time.monotonic() < deadline:
            time.sleep(self._poll)
