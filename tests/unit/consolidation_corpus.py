"""The Priya conversation as memory records, for the consolidation tests.

One turn is one memory (the finest unit a conversation writes, so it gives the most positions to
race); turns are a minute apart inside a session and sessions a day apart, so created_at orders
every turn and session 8's correction is newer than everything it corrects.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from services.common.vocabulary import MemoryType, Origin, candidate_key, normalise_meaning
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from tests.fixtures import fixture_path
from tests.harness.consolidation_store import InMemoryMemoryStore

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = fixture_path("priya_sessions.json")
T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
_PREFERENCE_WORDS = ("prefers", "likes", "enjoys", "dislikes", "wants")


def fixture() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text())
    return loaded


def memory(
    memory_id: str,
    text: str,
    *,
    at: datetime = T0,
    event_id: str | None = None,
    confidence: float = 0.7,
    intent_key: str = "",
) -> MemoryRecord:
    """An active memory of Priya's; the type follows the verb (preferences vs facts)."""
    kind = MemoryType.PREFERENCE if any(w in text for w in _PREFERENCE_WORDS) else MemoryType.FACT
    return MemoryRecord(
        memory_id=memory_id,
        tenant="northwind",
        user="priya",
        type=kind,
        text=text,
        status=MemoryStatus.ACTIVE,
        confidence=confidence,
        origin=Origin.OWNER,
        candidate_key=candidate_key("northwind", "priya", kind, text),
        trace_id=f"trace-{memory_id}",
        policy_version="test",
        created_at=at,
        updated_at=at,
        intent_key=intent_key,
        source_event_ids=(event_id or f"evt-{memory_id}",),
    )


def turn_time(session: int, index: int) -> datetime:
    return T0 + timedelta(days=session, minutes=index)


def priya_turns() -> list[MemoryRecord]:
    return [
        memory(f"mem-s{s['session']:02d}-{i}", text, at=turn_time(s["session"], i))
        for s in fixture()["sessions"]
        for i, text in enumerate(s["memories"])
    ]


def session_of(record: MemoryRecord) -> int:
    return int(record.memory_id.split("-")[1][1:])


def contents(store: InMemoryMemoryStore) -> list[tuple[object, ...]]:
    """Everything observable about a store's records, for equality between runs."""
    return [
        (r.memory_id, r.status, r.text, r.confidence, r.source_event_ids, r.supersedes, r.superseded_by)
        for r in store.all_records()
    ]


def live_meanings(store: InMemoryMemoryStore) -> set[str]:
    return {normalise_meaning(r.text) for r in store.all_active()}


def ends_live(store: InMemoryMemoryStore, memory_id: str) -> bool:
    """True when following superseded_by from `memory_id` reaches an active record (lineage)."""
    record = store.get(memory_id)
    while record.status is not MemoryStatus.ACTIVE:
        if record.superseded_by is None:
            return False
        record = store.get(record.superseded_by)
    return True
