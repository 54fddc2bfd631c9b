"""Deletion's error family: every error a Forget or GetDeletion can raise beyond core's.

All are `services.common.errors` subclasses with a stable `reason`, so `@grpc_method` maps them to
canonical codes in one place; nothing in deletion maps errors itself.
"""

from __future__ import annotations

from services.common.errors import NotFound


class DeletionNotFound(NotFound):
    reason = "DELETION_NOT_FOUND"


class EventNotFound(NotFound):
    """A forget by serving request id whose request serving does not know (or pruned)."""

    reason = "LEARNING_EVENT_NOT_FOUND"
