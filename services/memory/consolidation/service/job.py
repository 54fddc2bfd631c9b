"""The consolidation job: lock the user, read a snapshot, compute, write back by merge, report.

Following the seed "Background Job Mechanics" and `domain/consolidation.py`:
- One consolidator per user: the job's own connection holds the user's advisory lock for the
  job's whole life and runs every transaction of the job, so a job that lost its lock (its
  connection died) cannot commit a write-back either. A second job waits (`wait`) or ends
  SKIPPED_BUSY naming the running one. Running rows left by a killed process are marked FAILED by
  the next job that takes the lock (holding it proves their owner is gone).
- The snapshot is one short read (one statement) that records exactly the ids it saw; the compute
  runs outside any transaction, so turns are never blocked by it.
- The write-back is ONE transaction: it locks the rows the plan touches, re-checks that each is
  still active and unchanged since the read (a turn may have superseded or reinforced it), plans
  against the store as it is now and applies the plan by supersession only — new rows plus old
  rows retired with lineage, audited, the job id the event of every transition, the trace of the
  current span — then records the job's report in the same commit. A crash anywhere leaves either
  all of it or none of it; the next run simply runs again (the plan is deterministic).
- Unresolved contradictions become review items, de-duplicated by (slot, ids): ties are re-found
  on every run, and a reviewer should see each once.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from opentelemetry import trace

from services.common import telemetry
from services.memory.consolidation.domain.consolidation import (
    ConsolidationOutput,
    RetireReason,
    Snapshot,
    WriteBackPlan,
    consolidate,
    plan_write_back,
    read_snapshot,
)
from services.memory.consolidation.domain.errors import (
    ConsolidationJobNotFound,
)
from services.memory.consolidation.service.ports import (
    ConsolidationJob,
    ConsolidationMetrics,
    ConsolidationUnitOfWork,
    ConsolidationUowFactory,
    JobPhase,
    JobSession,
    JobSessionFactory,
    JobState,
    JobTrigger,
    PhaseHook,
    no_pause,
)
from services.memory.consolidation.service.review import send_to_review
from services.memory.core.domain.audit import AuditAction
from services.memory.core.domain.errors import RequestIdReused
from services.memory.core.domain.model import MemoryRecord, MemoryStatus, superseded
from services.memory.core.service.audit import record_transition
from services.memory.core.service.deps import utc_now
from services.memory.core.service.pagination import Page, PageRequest
from services.memory.core.service.ports import Effects, MemoryMetrics, Transition
from services.memory.core.service.retry import retry_on_conflict

_log = logging.getLogger(__name__)
_tracer = trace.get_tracer("memloop.consolidation")
_ABANDONED = "abandoned: the process running the job stopped before it finished; nothing was written back"


@dataclass(frozen=True)
class ConsolidationDeps:
    sessions: JobSessionFactory
    uow: ConsolidationUowFactory
    effects: Effects
    metrics: ConsolidationMetrics
    memory_metrics: MemoryMetrics
    hook: PhaseHook = no_pause
    clock: Callable[[], datetime] = utc_now
    wait_seconds: float = 300.0
    attempts: int = 6


@dataclass(frozen=True)
class RunConsolidation:
    tenant: str
    user: str
    wait: bool
    actor: str
    trigger: JobTrigger = JobTrigger.OPERATOR
    trace_id: str = ""
    """The caller's trace; empty for a scheduled run, whose job span then starts the trace."""
    request_id: str = ""


@dataclass
class _Written:
    """What the committed write-back changed, for the after-commit effects."""

    memory_ids: list[str]
    review_items: list[str]


def run_consolidation(cmd: RunConsolidation, deps: ConsolidationDeps) -> ConsolidationJob:
    """Run one job for one user and return its record (RUNNING never escapes: it ended somehow).

    Does not raise for the job's own failures: a failed job is a FAILED record with its error, and
    nothing of its write-back is visible. Idempotent in effect: a second run right after changes
    nothing and retires nothing. With a `request_id` the job's id is derived from it, so a repeat
    returns the first job's record (AIP-155) instead of running again; a repeat for another user is
    refused with RequestIdReused.
    """
    job_id = _job_id(cmd)
    if cmd.request_id:
        first = _first_job(cmd, job_id, deps)
        if first is not None:
            return first
    started = time.monotonic()
    with _tracer.start_as_current_span("consolidation.job") as span:
        job = ConsolidationJob(
            job_id=job_id,
            tenant=cmd.tenant,
            user=cmd.user,
            state=JobState.RUNNING,
            started_at=deps.clock(),
            trigger=cmd.trigger,
            requested_by=cmd.actor,
            trace_id=cmd.trace_id or _trace_id_of(span),
        )
        span.set_attribute("memloop.job_id", job.job_id)
        token = telemetry.current_event_id.set(job.job_id)
        try:
            with deps.sessions(cmd.tenant, cmd.user) as session:
                if session.lock(wait_seconds=deps.wait_seconds if cmd.wait else 0.0):
                    job = _run_locked(session, job, deps)
                else:
                    job = _skipped(job, deps)
        finally:
            telemetry.current_event_id.reset(token)
        span.set_attribute("memloop.job_state", job.state.value)
    deps.metrics.job_finished(job, time.monotonic() - started)
    _log.info(
        "consolidation %s for %s/%s: %s kept=%d retired=%d untouched=%d deferred=%d review=%d %s",
        job.job_id,
        job.tenant,
        job.user,
        job.state.value,
        job.kept,
        job.retired,
        job.untouched,
        job.deferred,
        job.sent_to_review,
        job.error,
        extra={"event_id": job.job_id},
    )
    return job


def _job_id(cmd: RunConsolidation) -> str:
    """A fresh id, or one derived from (tenant, request_id) so every repeat names the same job."""
    if not cmd.request_id:
        return f"consolidate-{uuid.uuid4().hex}"
    digest = hashlib.sha256(f"{cmd.tenant}\x1f{cmd.request_id}".encode()).hexdigest()[:32]
    return f"consolidate-{digest}"


def _first_job(cmd: RunConsolidation, job_id: str, deps: ConsolidationDeps) -> ConsolidationJob | None:
    with deps.uow(cmd.tenant) as uow:
        first = uow.consolidation.get_job(job_id)
    if first is not None and first.user != cmd.user:
        raise RequestIdReused(f"request_id {cmd.request_id[:64]!r} was used for another user's job")
    return first


def recover_abandoned(tenant: str, user: str, deps: ConsolidationDeps) -> list[str]:
    """Mark FAILED the running rows of a user whose job died with its process; returns their ids.

    Only under the user's lock, taken without waiting: holding it proves no live job owns them.
    """
    with deps.sessions(tenant, user) as session:
        if not session.lock(wait_seconds=0.0):
            return []
        with session.uow() as uow:
            abandoned = uow.consolidation.abandon_running(user, error=_ABANDONED, now=deps.clock())
            uow.commit()
    return abandoned


def _run_locked(session: JobSession, job: ConsolidationJob, deps: ConsolidationDeps) -> ConsolidationJob:
    with session.uow() as uow:
        first = uow.consolidation.get_job(job.job_id)
        if first is not None:  # a concurrent repeat of the same request_id ran while this one waited
            return first
        abandoned = uow.consolidation.abandon_running(job.user, error=_ABANDONED, now=deps.clock())
        uow.consolidation.add_job(job)
        uow.commit()
    if abandoned:
        _log.warning("consolidation: marked abandoned jobs failed: %s", ", ".join(abandoned))
    try:
        deps.hook(JobPhase.BEFORE_READ, job)
        snapshot = _read(session, job)
        job = replace(job, snapshot_size=len(snapshot.ids))
        deps.hook(JobPhase.AFTER_READ, job)
        output = consolidate(snapshot.memories)
        deps.hook(JobPhase.AFTER_COMPUTE, job)
        computed = job
        job, written = retry_on_conflict(
            deps.attempts, deps.memory_metrics, lambda: _write_back(session, computed, snapshot, output, deps)
        )
    except Exception as exc:
        _log.exception("consolidation %s failed", job.job_id, extra={"event_id": job.job_id})
        return _failed(session, job, exc, deps)
    if written.memory_ids:
        deps.effects.memories_changed(job.tenant, [job.user], written.memory_ids)
    for review_item_id in written.review_items:
        deps.effects.review_created(job.tenant, job.user, review_item_id, job.job_id)
    return job


def _read(session: JobSession, job: ConsolidationJob) -> Snapshot:
    with session.uow() as uow:
        records = uow.consolidation.active_records(job.user)
        uow.consolidation.record_snapshot(job.job_id, sorted(r.memory_id for r in records))
        uow.commit()
    return read_snapshot(records)


def _write_back(
    session: JobSession,
    job: ConsolidationJob,
    snapshot: Snapshot,
    output: ConsolidationOutput,
    deps: ConsolidationDeps,
) -> tuple[ConsolidationJob, _Written]:
    """One transaction: re-check, plan against the store as it is now, apply, record the report."""
    with session.uow() as uow:
        # Forget(user)'s and ApplyLearning's lock: a write-back that adds new versions commits
        # before a forget of the user reads its targets, or runs after it and finds them deleted.
        uow.lock(f"user:{job.user}")
        current = _current_ids(uow, job.user, snapshot, output)
        plan = plan_write_back(snapshot, output, current, job_id=job.job_id)
        # From here every write (retirements, new versions, copies, review items, audit rows) is
        # queued and sent set-based with the commit: one statement per row took 60 of 83 s at 1e5.
        uow.defer_appends()
        deps.hook(JobPhase.WRITE_BACK, job)
        by = Transition(
            event_id=job.job_id,
            trace_id=job.trace_id,
            actor=job.requested_by or "consolidation",
            now=deps.clock(),
            extra={"cause": "consolidation"},
        )
        changed = _apply(uow, plan, snapshot, output, by)
        review_items = send_to_review(uow, job, plan, snapshot, by)
        done = replace(
            job,
            kept=plan.kept,
            retired=plan.retired,
            untouched=plan.untouched,
            deferred=plan.deferred,
            sent_to_review=plan.sent_to_review,
        ).ended(JobState.COMPLETED, now=deps.clock())
        uow.consolidation.save_job(done)
        deps.hook(JobPhase.BEFORE_COMMIT, done)
        uow.commit()
    return done, _Written(changed, review_items)


def _current_ids(
    uow: ConsolidationUnitOfWork, user: str, snapshot: Snapshot, output: ConsolidationOutput
) -> frozenset[str]:
    """The store's active ids now, counting a touched snapshot record only if it is unchanged.

    The rows the plan may write are locked first (a turn that wants one waits for this commit);
    one reinforced by a turn after the read (new provenance) counts as changed, so its group is
    deferred rather than replaced by a version that would drop the turn's provenance.
    """
    by_id = {m.memory_id: m for m in snapshot.memories}
    touched = {m.memory_id for m in output.memories if m != by_id[m.memory_id]}
    touched |= {r.memory_id for r in output.retirements} | {r.survivor_id for r in output.retirements}
    live = uow.consolidation.lock_live_state(user, sorted(touched))
    unchanged = {
        memory_id
        for memory_id, state in live.items()
        if state.status is MemoryStatus.ACTIVE and state.sources == frozenset(by_id[memory_id].source_event_ids)
    }
    return frozenset((uow.consolidation.active_ids(user) - touched) | unchanged)


def _apply(
    uow: ConsolidationUnitOfWork, plan: WriteBackPlan, snapshot: Snapshot, output: ConsolidationOutput, by: Transition
) -> list[str]:
    """Apply the plan by supersession; returns every memory id whose row changed or was created.

    Old rows leave `active` before their successors are inserted: the one-active indexes are not
    deferrable, and a new version may carry the candidate key of a member retired in this plan.
    Lineage foreign keys are deferred to commit, so a retirement may name a version inserted after it.
    Nothing is sent here (the write-back's unit of work defers): the commit sends the retirements,
    the new rows, their copied provenance and vectors and the audit rows as a handful of statements
    over arrays, in that order.
    """
    by_id = {m.memory_id: m for m in snapshot.memories}
    members: dict[str, list[str]] = defaultdict(list)
    for r in output.retirements:
        if r.reason is RetireReason.MERGED:
            members[r.survivor_id].append(r.memory_id)
    changed: list[str] = []
    for version in plan.new_versions:
        _retire(uow, by_id[version.supersedes], version.record.memory_id, "new_version", by)
        changed.append(version.supersedes)
    for retirement in plan.retirements:
        _retire(uow, by_id[retirement.memory_id], retirement.superseded_by, retirement.reason.value, by)
        changed.append(retirement.memory_id)
    groups: dict[str, list[str]] = {}
    wordings: dict[str, str] = {}
    for version in plan.new_versions:
        record = replace(version.record, trace_id=by.trace_id)
        group = [version.supersedes, *members[version.supersedes]]
        uow.memories.add(record)
        groups[record.memory_id] = group
        wordings[record.memory_id] = min((i for i in group if by_id[i].text == record.text), default=version.supersedes)
        detail = {
            "type": record.type.value,
            "origin": record.origin.value,
            "policy_version": record.policy_version,
            "supersedes": version.supersedes,
            "merged": len(group) - 1,
        }
        record_transition(uow.audit, AuditAction.MEMORY_STORED, record.memory_id, by, detail)
        changed.append(record.memory_id)
    uow.consolidation.copy_provenance(groups)
    uow.consolidation.copy_vectors(wordings)
    return changed


def _retire(uow: ConsolidationUnitOfWork, old: MemoryRecord, successor: str, reason: str, by: Transition) -> None:
    superseded(old, by=successor, now=by.now)  # the domain's transition rule: only an active record
    uow.memories.set_status(
        old.memory_id, MemoryStatus.SUPERSEDED, superseded_by=successor, event_id=by.event_id, trace_id=by.trace_id
    )
    # `retire_reason` is one of RetireReason's codes. Under `reason` the audit would take it for a
    # person's words and write an operator note for every retirement (one statement per row).
    detail = {"superseded_by": successor, "retire_reason": reason}
    record_transition(uow.audit, AuditAction.MEMORY_SUPERSEDED, old.memory_id, by, detail)


def _trace_id_of(span: trace.Span) -> str:
    """The 32-hex trace id of the job's own span (a scheduled run has no caller to take it from)."""
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""


def _skipped(job: ConsolidationJob, deps: ConsolidationDeps) -> ConsolidationJob:
    with deps.uow(job.tenant) as uow:
        first = uow.consolidation.get_job(job.job_id)
        if first is not None:  # the busy holder is this very request_id's first run
            return first
        running = uow.consolidation.running_job(job.user)
        holder = f"job {running.job_id}" if running is not None else "another job"
        skipped = job.ended(
            JobState.SKIPPED_BUSY, now=deps.clock(), error=f"{holder} is consolidating this user; nothing was done"
        )
        uow.consolidation.add_job(skipped)
        uow.commit()
    return skipped


def _failed(session: JobSession, job: ConsolidationJob, exc: Exception, deps: ConsolidationDeps) -> ConsolidationJob:
    """Record the failure; on the job's connection if it still works, else on a fresh one."""
    failed = job.ended(JobState.FAILED, now=deps.clock(), error=f"{type(exc).__name__}: {exc}"[:2000])
    for uow_factory in (session.uow, lambda: deps.uow(job.tenant)):
        try:
            with uow_factory() as uow:
                uow.consolidation.save_job(failed)
                uow.commit()
            return failed
        except Exception:
            _log.exception("could not record the failure of %s", job.job_id)
    return failed


def get_job(tenant: str, job_id: str, deps: ConsolidationDeps) -> ConsolidationJob:
    with deps.uow(tenant) as uow:
        job = uow.consolidation.get_job(job_id)
    if job is None:
        raise ConsolidationJobNotFound(f"consolidation job {job_id} not found")
    return job


def list_jobs(tenant: str, user: str, page: PageRequest, deps: ConsolidationDeps) -> Page[ConsolidationJob]:
    """Newest first; the page token's key is the last job's sequence (the next page is older)."""
    with deps.uow(tenant) as uow:
        rows = uow.consolidation.page_jobs(user, before_seq=page.after, limit=page.size + 1)
    return Page.from_rows(rows, page)
