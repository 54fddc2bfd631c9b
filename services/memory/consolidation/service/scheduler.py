"""Sleep-time scheduling: start a user's consolidation after N new memories or T seconds idle.

Runs on its own thread in the memory process, never on a request's path. The trigger state is
derived from the database, not from this replica's own writes, so every replica sees every
user's memories and reaches the same decision: "fresh" memories are the rows written since the
user's last completed job started, not counting the jobs' own rows. Replicas that decide together
are serialised by the per-user lock (the losers end SKIPPED_BUSY, a clear and harmless record).

The watermark over `row_id` only says which users to look at; a row committed out of identity
order can be noticed one memory late, which delays a job and never loses one (the count itself
is recomputed from the table). The same loop marks FAILED the running records of jobs whose
process died, once their user's lock proves nobody holds it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from services.memory.consolidation.service.job import (
    ConsolidationDeps,
    RunConsolidation,
    recover_abandoned,
    run_consolidation,
)
from services.memory.consolidation.service.ports import (
    ConsolidationActivity,
    ConsolidationJob,
    DueUser,
    JobState,
    JobTrigger,
)
from services.memory.core.service.deps import utc_now

_log = logging.getLogger(__name__)
SCHEDULER_ACTOR = "consolidation-scheduler"


@dataclass(frozen=True)
class Triggers:
    """0 disables a rule; with both 0 the scheduler only sweeps abandoned jobs."""

    after_memories: int
    idle_seconds: float
    poll_seconds: float
    abandoned_after_seconds: float = 10.0

    @property
    def enabled(self) -> bool:
        """False with both rules off: no user is ever due, so none is watched (each watched user
        costs a count query per poll, which for a whole tenant competes with retrieval)."""
        return bool(self.after_memories or self.idle_seconds)

    def due(self, state: DueUser, now: datetime) -> bool:
        if state.fresh <= 0:
            return False
        if self.after_memories and state.fresh >= self.after_memories:
            return True
        if self.idle_seconds and state.last_new is not None:
            return (now - state.last_new).total_seconds() >= self.idle_seconds
        return False


class ConsolidationScheduler:
    """`start()` runs `tick()` every `poll_seconds` on a daemon thread until `stop()`."""

    def __init__(
        self,
        activity: ConsolidationActivity,
        deps: ConsolidationDeps,
        triggers: Triggers,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._activity = activity
        self._deps = deps
        self._triggers = triggers
        self._clock = clock
        self._watermark = 0
        self._watching: set[tuple[str, str]] = set()
        self._not_before: dict[tuple[str, str], datetime] = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="consolidation-scheduler", daemon=True)
        self._thread.start()
        self._deps.metrics.scheduler_running(True)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loop to stop and wait a little; a job in flight is safe to abandon (it rolls back)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._deps.metrics.scheduler_running(False)

    def tick(self) -> list[ConsolidationJob]:
        """One pass: notice users with new rows, run the due ones, sweep abandoned jobs."""
        if self._triggers.enabled:
            users, self._watermark = self._activity.users_with_new_memories(self._watermark)
            self._watching.update(users)
        ran: list[ConsolidationJob] = []
        watched = sorted(self._watching)
        for key, state in zip(watched, self._activity.due_states(watched) if watched else [], strict=True):
            if self._stopping.is_set():
                break
            job = self._maybe_run(key, state)
            if job is not None:
                ran.append(job)
        self._sweep()
        return ran

    def _maybe_run(self, key: tuple[str, str], state: DueUser) -> ConsolidationJob | None:
        """`state`: the user's as read at the start of this pass (one read for every watched user)."""
        now = self._clock()
        if state.fresh == 0:
            self._watching.discard(key)
            self._not_before.pop(key, None)
            return None
        if not self._triggers.due(state, now) or self._not_before.get(key, now) > now:
            return None
        job = run_consolidation(
            RunConsolidation(key[0], key[1], wait=False, actor=SCHEDULER_ACTOR, trigger=JobTrigger.SCHEDULER),
            self._deps,
        )
        if job.state is not JobState.COMPLETED:
            # Busy or failed: try again after a pause rather than on every poll.
            pause = max(self._triggers.poll_seconds, self._triggers.idle_seconds or 0.0, 30.0)
            self._not_before[key] = self._clock() + timedelta(seconds=pause)
        return job

    def _sweep(self) -> None:
        before = self._clock() - timedelta(seconds=self._triggers.abandoned_after_seconds)
        for tenant, user in self._activity.running_jobs(started_before=before):
            abandoned = recover_abandoned(tenant, user, self._deps)
            if abandoned:
                _log.warning("consolidation jobs of %s/%s abandoned by a stopped process: %s", tenant, user, abandoned)

    def _loop(self) -> None:
        while not self._stopping.wait(self._triggers.poll_seconds):
            try:
                self.tick()
            except Exception:
                _log.exception("consolidation scheduler pass failed; next pass in %.1fs", self._triggers.poll_seconds)
