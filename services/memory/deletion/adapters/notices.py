"""Deletion notices on core NATS: ids only. `<prefix>.deletion.requests` wakes every replica's
workflow when a deletion is acknowledged; `<prefix>.deletion.acks` reports that a replica's index
no longer holds it. Both are wake-ups, not the record: the ledger in the database is, and every
replica also polls it, so a lost notice only costs a poll interval."""

from __future__ import annotations

import json

from services.common.telemetry import inject_headers
from services.memory.core.adapters.nats_bus import NatsBus


def requests_subject(prefix: str) -> str:
    return f"{prefix}.deletion.requests"


def acks_subject(prefix: str) -> str:
    return f"{prefix}.deletion.acks"


class NatsDeletionNotices:
    def __init__(self, bus: NatsBus, *, prefix: str, replica_id: str) -> None:
        self._bus = bus
        self._prefix = prefix
        self._replica = replica_id

    def requested(self, tenant: str, deletion_id: str) -> None:
        payload = {"replica": self._replica, "tenant": tenant, "deletion_id": deletion_id}
        self._bus.publish(requests_subject(self._prefix), json.dumps(payload).encode(), inject_headers())

    def acknowledged(self, tenant: str, deletion_id: str, location: str) -> None:
        payload = {"replica": self._replica, "tenant": tenant, "deletion_id": deletion_id, "location": location}
        self._bus.publish(acks_subject(self._prefix), json.dumps(payload).encode(), inject_headers())
