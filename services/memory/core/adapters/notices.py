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


# Well under NATS's default 1 MB max_payload (and any sane configured one), headers included.
NOTICE_BUDGET_BYTES = 256 * 1024


def chunked_ids(memory_ids: Sequence[str], budget: int = NOTICE_BUDGET_BYTES) -> list[list[str]]:
    """Split ids into runs whose JSON fits `budget` bytes (a forget of a large user is many notices)."""
    chunks: list[list[str]] = [[]]
    size = 0
    for memory_id in memory_ids:
        cost = len(json.dumps(memory_id)) + 2
        if chunks[-1] and size + cost > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(memory_id)
        size += cost
    return chunks


class NatsNotices:
    def __init__(self, bus: NatsBus, *, prefix: str, replica_id: str) -> None:
        self._bus = bus
        self._prefix = prefix
        self._replica = replica_id

    def memory_changed(self, tenant: str, memory_ids: Sequence[str], change_seq: int) -> None:
        """One notice per chunk of ids, each under NATS's max payload; every chunk carries the seq."""
        for chunk in chunked_ids(memory_ids):
            payload = {"replica": self._replica, "tenant": tenant, "memory_ids": chunk, "change_seq": change_seq}
            self._bus.publish(changes_subject(self._prefix), json.dumps(payload).encode(), inject_headers())

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        payload = {"tenant": tenant, "user": user, "review_item_id": review_item_id, "event_id": event_id}
        self._bus.publish(review_subject(self._prefix, tenant), json.dumps(payload).encode(), inject_headers())
