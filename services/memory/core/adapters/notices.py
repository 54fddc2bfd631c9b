"""Change and review notices on NATS: ids and sequence numbers only, never content."""

from __future__ import annotations

import json
from collections.abc import Sequence

from services.common.telemetry import inject_headers
from services.memory.core.adapters.nats_bus import NatsBus


def changes_subject(prefix: str) -> str:
    return f"{prefix}.memory.changes"


def review_subject(prefix: str, tenant: str) -> str:
    return f"{prefix}.review.{tenant}"


class NatsNotices:
    def __init__(self, bus: NatsBus, *, prefix: str, replica_id: str) -> None:
        self._bus = bus
        self._prefix = prefix
        self._replica = replica_id

    def memory_changed(self, tenant: str, memory_ids: Sequence[str], change_seq: int) -> None:
        payload = {"replica": self._replica, "tenant": tenant, "memory_ids": list(memory_ids), "change_seq": change_seq}
        self._bus.publish(changes_subject(self._prefix), json.dumps(payload).encode(), inject_headers())

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        payload = {"tenant": tenant, "user": user, "review_item_id": review_item_id, "event_id": event_id}
        self._bus.publish(review_subject(self._prefix, tenant), json.dumps(payload).encode(), inject_headers())
