"""TEST-ONLY: kill the memory process in the middle of a deletion's workflow.

Enabled only when MEMLOOP_FAULT_DELETION_CRASH_AFTER_STEP names a location (`vectors`,
`derived_records`, `streams`, `content_blobs` or `replica:<id>`); the default hook does nothing.
Right after that location is recorded done, the process sends itself SIGKILL: no `finally`, no
drain, no index persistence, exactly like a machine dying. The restart must then finish the
deletion from its ledger.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

_log = logging.getLogger(__name__)


class CrashAfterStep:
    def __init__(self, location: str) -> None:
        self._location = location

    def __call__(self, deletion_id: str, location: str) -> None:
        if location != self._location:
            return
        _log.warning("fault hook: crashing after step %s of deletion %s", location, deletion_id)
        for handler in logging.getLogger().handlers:
            handler.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
