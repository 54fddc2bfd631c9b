"""One contract for both change feeds (in-memory fake and SQL), plus the property only SQL can break:
a commit that lands after a later sequence number was already read is still delivered."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.orm import sessionmaker

from services.common.db import run_migrations, url_for_role
from services.common.vocabulary import MemoryType
from services.memory.bootstrap import MIGRATIONS
from services.memory.core.adapters.change_feed import SqlChangeFeed
from services.memory.core.adapters.in_memory import InMemoryChangeFeed
from services.memory.core.service.ports import ChangeFeed, FeedCursor, IndexedChange, Vector

pytestmark = pytest.mark.integration

EMBEDDER = "test-embedder"
APP_ROLE = "memloop_memory_app"
_INSERT = text(
    "INSERT INTO memories (memory_id, tenant, user_id, type, text, status, confidence, origin, event_id,"
    " status_event_id) VALUES (:id, 'acme', 'alice', 'fact', :text, 'active', 1, 'owner', 'e', 'e') RETURNING row_id"
)


@dataclass
class Feed:
    """A feed under test and a way to write rows into its store (committed unless `connection` given)."""

    feed: ChangeFeed
    write: Callable[[str, bool], int]
    admin: Engine | None = None


def _vector(seed: int) -> Vector:
    vector = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    return vector / np.linalg.norm(vector)


@pytest.fixture(params=["in_memory", "sql"])
def feed(request: pytest.FixtureRequest) -> Iterator[Feed]:
    if request.param == "in_memory":
        fake, rows = InMemoryChangeFeed(), dict[str, int]()

        def write_fake(memory_id: str, active: bool) -> int:
            row_id = rows.setdefault(memory_id, len(rows) + 1)
            change = IndexedChange(
                row_id, memory_id, "acme", "alice", MemoryType.FACT, active, None, f"text of {memory_id}"
            )
            fake.write(change, embedder=EMBEDDER)
            return row_id

        yield Feed(fake, write_fake)
        return
    url = request.getfixturevalue("new_database")("feed")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    admin, app = create_engine(url), create_engine(url_for_role(url, APP_ROLE))

    def write_sql(memory_id: str, active: bool) -> int:
        with admin.begin() as connection:
            return _write(connection, memory_id, active)

    yield Feed(SqlChangeFeed(sessionmaker(app)), write_sql, admin)
    admin.dispose()
    app.dispose()


def _write(connection: Connection, memory_id: str, active: bool) -> int:
    connection.execute(text("SELECT set_config('memloop.tenant', '*', true)"))
    exists = connection.execute(text("SELECT row_id FROM memories WHERE memory_id = :id"), {"id": memory_id}).first()
    if exists is not None:
        connection.execute(
            text("UPDATE memories SET status = :s WHERE memory_id = :id"),
            {"s": "active" if active else "superseded", "id": memory_id},
        )
        return int(exists[0])
    return int(connection.execute(_INSERT, {"id": memory_id, "text": f"text of {memory_id}"}).scalar_one())


def _ids(changes: list[IndexedChange]) -> set[str]:
    return {c.memory_id for c in changes}


def test_snapshot_holds_the_active_rows_and_the_feed_then_delivers_every_later_change(feed: Feed) -> None:
    # Given: two active rows and one that was retired
    for name in ("a", "b", "c"):
        feed.write(name, True)
    feed.write("c", False)
    rows, cursor = feed.feed.snapshot(EMBEDDER)
    assert _ids(rows) == {"a", "b"}
    assert all(r.active and r.vector is None and r.text == f"text of {r.memory_id}" for r in rows)
    # When: one is retired and one added
    feed.write("a", False)
    feed.write("d", True)
    changes, after = feed.feed.changes_since(cursor, EMBEDDER)
    # Then: both are delivered with their current state (re-delivery of older rows is allowed)
    state = {c.memory_id: c.active for c in changes}
    assert state["a"] is False and state["d"] is True
    assert after.seq > cursor.seq
    assert _ids(feed.feed.changes_since(after, EMBEDDER)[0]) <= _ids(changes)


def test_stored_vectors_come_back_with_their_rows_and_storing_twice_is_harmless(feed: Feed) -> None:
    feed.write("a", True)
    rows, _ = feed.feed.snapshot(EMBEDDER)
    pairs = [(row, _vector(i)) for i, row in enumerate(rows)]
    feed.feed.store_vectors(EMBEDDER, pairs)
    feed.feed.store_vectors(EMBEDDER, pairs)
    again, _ = feed.feed.snapshot(EMBEDDER)
    assert again[0].vector is not None and np.allclose(again[0].vector, pairs[0][1])
    assert again[0].text == ""  # text is only read when a vector is missing
    # and a row that left the active set comes back without its vector: the index only drops it
    feed.write("a", False)
    retired = [c for c in feed.feed.changes_since(FeedCursor(seq=0, xmin=0), EMBEDDER)[0] if c.memory_id == "a"]
    assert retired and all(not c.active and c.vector is None and c.text == "" for c in retired)


@pytest.mark.parametrize("feed", ["sql"], indirect=True)  # the in-memory feed commits every write at once
def test_a_commit_landing_after_a_later_sequence_was_read_is_not_skipped(feed: Feed) -> None:
    assert feed.admin is not None
    _, cursor = feed.feed.snapshot(EMBEDDER)
    slow = feed.admin.connect()
    transaction = slow.begin()
    try:
        # Given: a transaction takes a sequence number and stays open, while a later one commits
        _write(slow, "slow", True)
        feed.write("fast-" + uuid.uuid4().hex[:6], True)
        changes, cursor = feed.feed.changes_since(cursor, EMBEDDER)
        assert "slow" not in _ids(changes)
        # When: the earlier transaction commits after the later sequence was read
        transaction.commit()
    finally:
        slow.close()
    # Then: the next read still delivers it, though its sequence is below the cursor's
    late, _ = feed.feed.changes_since(cursor, EMBEDDER)
    assert "slow" in _ids(late)
    assert isinstance(cursor, FeedCursor)


def test_vectors_for_more_rows_than_one_statement_can_bind_are_stored(new_database: Callable[[str], str]) -> None:
    # Given: 14,000 active rows without vectors (five bind parameters each would be 70,000 in one
    # multi-row VALUES, past PostgreSQL's 65,535: memory failed to start on such a database)
    url = new_database("feed_bulk")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    admin, app = create_engine(url), create_engine(url_for_role(url, APP_ROLE))
    try:
        with admin.begin() as connection:
            connection.execute(text("SELECT set_config('memloop.tenant', '*', true)"))
            connection.execute(
                text(
                    "INSERT INTO memories (memory_id, tenant, user_id, type, text, status, confidence, origin,"
                    " event_id, status_event_id)"
                    " SELECT 'm' || i, 'acme', 'alice', 'fact', 'text ' || i, 'active', 1, 'owner', 'e', 'e'"
                    " FROM generate_series(1, 14000) AS i"
                )
            )
        feed = SqlChangeFeed(sessionmaker(app))
        rows, _ = feed.snapshot(EMBEDDER)
        vectors = np.random.default_rng(0).standard_normal((len(rows), 8)).astype(np.float32)
        # When: the vectors of all of them are stored at once, as a start-up rebuild does
        feed.store_vectors(EMBEDDER, list(zip(rows, vectors, strict=True)))
        # Then: every row has its vector, byte for byte
        again, _ = feed.snapshot(EMBEDDER)
        stored = {row.memory_id: row.vector for row in again if row.vector is not None}
        assert len(rows) == 14_000 and len(stored) == 14_000
        assert all(np.array_equal(stored[row.memory_id], vectors[i]) for i, row in enumerate(rows))
    finally:
        admin.dispose()
        app.dispose()
