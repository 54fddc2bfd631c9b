"""Consolidation's error family: every error a job or its RPCs can raise beyond core's.

All are `services.common.errors` subclasses with a stable `reason`, so `@grpc_method` maps them to
canonical codes in one place; nothing in consolidation maps errors itself.
"""

from __future__ import annotations

from services.common.errors import FailedPrecondition, NotFound


class ConsolidationJobNotFound(NotFound):
    reason = "CONSOLIDATION_JOB_NOT_FOUND"


class WriteBackRejected(FailedPrecondition):
    """The output speaks about ids the snapshot did not read, or drops one without a survivor."""

    reason = "CONSOLIDATION_WRITE_BACK_REJECTED"
