"""Retrieval's one-round-trip re-check on real PostgreSQL, as the memory app role (row-level
security on): only active rows of the caller's tenant and user come back, and the tenant setting
never outlives the read on the pooled connection."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from services.common.db import run_migrations, url_for_role
from services.common.vocabulary import MemoryType
from services.memory.bootstrap import MIGRATIONS
from services.memory.core.adapters.active_reader import SqlActiveReader
from services.memory.core.domain.model import MemoryStatus

pytestmark = pytest.mark.integration

APP_ROLE = "memloop_memory_app"
ROWS = [  # (memory_id, tenant, user, status, type)
    ("a-live", "acme", "alice", "active", "fact"),
    ("a-deleted", "acme", "alice", "deleted", "fact"),
    ("a-superseded", "acme", "alice", "superseded", "fact"),
    ("b-live", "acme", "bob", "active", "fact"),
    ("g-live", "globex", "alice", "active", "fact"),
    ("a-prefers", "acme", "alice", "active", "preference"),
]


@pytest.fixture
def seeded(new_database: Callable[[str], str]) -> Iterator[tuple[Engine, dict[str, int]]]:
    url = new_database("active_reader")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    admin, app = create_engine(url), create_engine(url_for_role(url, APP_ROLE), pool_size=1, max_overflow=0)
    row_ids: dict[str, int] = {}
    with admin.begin() as connection:
        connection.execute(text("SELECT set_config('memloop.tenant', '*', true)"))
        for memory_id, tenant, user, status, kind in ROWS:
            row_ids[memory_id] = connection.execute(
                text(
                    "INSERT INTO memories (memory_id, tenant, user_id, type, text, status, confidence, origin,"
                    " event_id, status_event_id) VALUES (:id, :tenant, :user, :kind, :text, :status, 1, 'owner',"
                    " 'e', 'e') RETURNING row_id"
                ),
                {
                    "id": memory_id,
                    "tenant": tenant,
                    "user": user,
                    "kind": kind,
                    "text": f"text of {memory_id}",
                    "status": status,
                },
            ).scalar_one()
        for seconds, event_id in enumerate(("evt-2", "evt-1")):
            connection.execute(
                text(
                    "INSERT INTO memory_sources (memory_id, event_id, tenant, added_at)"
                    " VALUES ('a-live', :e, 'acme', now() + make_interval(secs => :s))"
                ),
                {"e": event_id, "s": seconds},
            )
    yield app, row_ids
    admin.dispose()
    app.dispose()


def test_only_the_callers_active_rows_come_back_with_their_sources(seeded: tuple[Engine, dict[str, int]]) -> None:
    app, row_ids = seeded
    reader = SqlActiveReader(app)
    # When: alice of acme re-checks hits naming every row, of every tenant, user and state
    found = reader.active_by_row_ids("acme", "alice", list(row_ids.values()))
    # Then: only her active rows, complete, with their sources in the order they were added
    assert [(r.memory_id, r.tenant, r.user, r.status) for r in found] == [
        ("a-live", "acme", "alice", MemoryStatus.ACTIVE),
        ("a-prefers", "acme", "alice", MemoryStatus.ACTIVE),
    ]
    assert found[0].text == "text of a-live" and found[0].row_id == row_ids["a-live"]
    assert found[0].source_event_ids == ("evt-2", "evt-1")
    # And the other tenant's alice sees her own row only, on the same pooled connection
    assert [r.memory_id for r in reader.active_by_row_ids("globex", "alice", list(row_ids.values()))] == ["g-live"]
    assert reader.active_by_row_ids("acme", "alice", []) == []


def test_the_tenant_setting_ends_with_the_read(seeded: tuple[Engine, dict[str, int]]) -> None:
    app, row_ids = seeded
    SqlActiveReader(app).active_by_row_ids("acme", "alice", [row_ids["a-live"]])
    # Then: the pool's one connection is idle and unscoped again, so row-level security hides every row
    with app.connect() as connection:
        assert connection.execute(text("SELECT current_setting('memloop.tenant', true)")).scalar_one() in ("", None)
        assert connection.execute(text("SELECT count(*) FROM memories")).scalar_one() == 0


def test_the_first_active_rows_in_hit_order_of_the_named_types(seeded: tuple[Engine, dict[str, int]]) -> None:
    app, row_ids = seeded
    reader = SqlActiveReader(app)
    hits = [row_ids[m] for m in ("b-live", "a-prefers", "a-deleted", "a-live", "g-live", "a-superseded")]
    # When: alice re-checks hits in which her two active rows come second and fourth
    # Then: they come back in hit order, and `first` keeps the first of them only
    assert [r.memory_id for r in reader.active_by_row_ids("acme", "alice", hits)] == ["a-prefers", "a-live"]
    assert [r.memory_id for r in reader.active_by_row_ids("acme", "alice", hits[::-1])] == ["a-live", "a-prefers"]
    assert [r.memory_id for r in reader.active_by_row_ids("acme", "alice", hits, first=1)] == ["a-prefers"]
    # And the type filter applies before the limit, with the sources read for the row kept
    facts = reader.active_by_row_ids("acme", "alice", hits, types=frozenset({MemoryType.FACT}), first=1)
    assert [(r.memory_id, r.source_event_ids) for r in facts] == [("a-live", ("evt-2", "evt-1"))]
    assert reader.active_by_row_ids("acme", "alice", hits, types=frozenset({MemoryType.EPISODE})) == []
    assert reader.active_by_row_ids("acme", "alice", hits, first=0) == []


def test_conflicts_read_each_users_active_intents_and_hits_in_one_call(seeded: tuple[Engine, dict[str, int]]) -> None:
    app, row_ids = seeded
    with app.begin() as connection:  # the app role, scoped to acme: acme's rows but alice's preference share an intent
        connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
        connection.execute(
            text("UPDATE memories SET intent_key = 'meeting_window' WHERE tenant = 'acme' AND memory_id <> 'a-prefers'")
        )
    reader = SqlActiveReader(app)
    # When: conflicts are read for alice's intent and for hits naming rows of every user, state and tenant
    hits = [("alice", row_ids[m]) for m in ("a-prefers", "a-deleted", "b-live", "g-live")] + [
        ("bob", row_ids["b-live"])
    ]
    found = reader.active_for_conflicts("acme", [("alice", "meeting_window")], hits)
    # Then: alice's active record of the intent, her active hit, and bob's row only where bob asked
    assert sorted((r.memory_id, r.user) for r in found) == [
        ("a-live", "alice"),
        ("a-prefers", "alice"),
        ("b-live", "bob"),
    ]
    assert next(r for r in found if r.memory_id == "a-live").source_event_ids == ("evt-2", "evt-1")
    # And another tenant's alice sees her own rows only; nothing asked, nothing read
    assert [
        r.memory_id for r in reader.active_for_conflicts("globex", [("alice", "")], [("alice", row_ids["g-live"])])
    ] == ["g-live"]
    assert reader.active_for_conflicts("acme", [], []) == []


def test_processed_among_names_the_tenants_processed_events_in_one_read(seeded: tuple[Engine, dict[str, int]]) -> None:
    app, _ = seeded
    for tenant in ("acme", "globex"):
        with app.begin() as connection:
            connection.execute(text("SELECT set_config('memloop.tenant', :t, true)"), {"t": tenant})
            connection.execute(
                text(
                    "INSERT INTO processed_events (tenant, event_id, user_id, trace_id, outcome)"
                    " VALUES (:t, :e, 'alice', '', CAST(:o AS jsonb))"
                ),
                {"t": tenant, "e": f"evt-{tenant}", "o": '{"event_id": "x", "applied": []}'},
            )
    reader = SqlActiveReader(app)
    # When: acme asks about its event, globex's, an unknown one, and its own twice
    found = reader.processed_among("acme", ["evt-acme", "evt-globex", "evt-unknown", "evt-acme"])
    # Then: only its own processed event, with the stored outcome and the time it was processed
    assert list(found) == ["evt-acme"]
    outcome, processed_at = found["evt-acme"]
    assert outcome == {"event_id": "x", "applied": []} and processed_at is not None
    assert reader.processed_among("acme", []) == {}
