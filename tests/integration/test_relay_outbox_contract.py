"""One contract, two implementations: the relay's in-memory outbox must behave like PostgreSQL's.

Against PostgreSQL this is also the proof of the claim SQL itself: disjoint claims under SKIP
LOCKED, leases that lapse, a mark that happens once, NOTIFY waking the relay, retention pruning.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from services.common.db import run_migrations, url_for_role
from services.relay.adapters.in_memory import InMemoryOutboxStore
from services.relay.adapters.pg_outbox import PgOutboxStore
from services.relay.bootstrap import libpq_url
from services.relay.domain.model import OutboxRow, PublishReceipt
from services.relay.service.ports import OutboxStore
from services.serving.bootstrap import MIGRATIONS_DIR

pytestmark = pytest.mark.integration


@dataclass
class Harness:
    store: OutboxStore
    other: OutboxStore
    """A second relay's store on the same outbox (its own connections, for real concurrency)."""
    add: Callable[[int], list[str]]


def _row() -> OutboxRow:
    return OutboxRow(str(uuid.uuid4()), "acme", "ab" * 16, "", b"evt", datetime.now(UTC))


@pytest.fixture(params=["in_memory", "postgres"])
async def outbox(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    if request.param == "in_memory":
        memory = InMemoryOutboxStore()

        def add_in_memory(count: int) -> list[str]:
            rows = [_row() for _ in range(count)]
            for row in rows:
                memory.add(row)
            return [r.event_id for r in rows]

        yield Harness(memory, memory, add_in_memory)
        return
    admin_url = request.getfixturevalue("new_database")("relay_contract")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")

    def add_in_postgres(count: int) -> list[str]:
        rows = [_row() for _ in range(count)]
        with psycopg.connect(libpq_url(admin_url)) as conn:
            for row in rows:
                conn.execute(
                    "INSERT INTO outbox (event_id, tenant, request_id, trace_id, payload) VALUES (%s, %s, %s, %s, %s)",
                    (row.event_id, row.tenant, row.event_id, row.trace_id, row.payload),
                )
            conn.execute("NOTIFY memloop_outbox")
        return [r.event_id for r in rows]

    conninfo = libpq_url(url_for_role(admin_url, "memloop_relay_app"))
    store, other = await PgOutboxStore.open(conninfo), await PgOutboxStore.open(conninfo)
    yield Harness(store, other, add_in_postgres)
    await store.close()
    await other.close()


def _receipt(event_id: str, seq: int, *, age: timedelta = timedelta(0)) -> PublishReceipt:
    return PublishReceipt(event_id, seq, False, datetime.now(UTC) - age)


async def test_concurrent_claimers_get_disjoint_rows_covering_the_backlog(outbox: Harness) -> None:
    ids = outbox.add(40)
    first, second = await asyncio.gather(
        outbox.store.claim_batch(25, lease_seconds=30, claimer="a"),
        outbox.other.claim_batch(25, lease_seconds=30, claimer="b"),
    )
    claimed_a, claimed_b = {r.event_id for r in first}, {r.event_id for r in second}
    assert not claimed_a & claimed_b
    assert claimed_a | claimed_b == set(ids)
    assert await outbox.store.claim_batch(10, lease_seconds=30, claimer="c") == []


async def test_a_lease_hides_a_row_until_it_lapses(outbox: Harness) -> None:
    [event_id] = outbox.add(1)
    assert [r.event_id for r in await outbox.store.claim_batch(5, lease_seconds=0.3, claimer="a")] == [event_id]
    assert await outbox.store.claim_batch(5, lease_seconds=0.3, claimer="b") == []
    await asyncio.sleep(0.4)
    assert [r.event_id for r in await outbox.store.claim_batch(5, lease_seconds=30, claimer="b")] == [event_id]


async def test_release_returns_only_the_claimers_own_rows(outbox: Harness) -> None:
    [event_id] = outbox.add(1)
    await outbox.store.claim_batch(5, lease_seconds=30, claimer="a")
    await outbox.store.release([event_id], claimer="b")
    assert await outbox.store.claim_batch(5, lease_seconds=30, claimer="b") == []
    await outbox.store.release([event_id], claimer="a")
    assert len(await outbox.store.claim_batch(5, lease_seconds=30, claimer="b")) == 1


async def test_a_row_is_marked_once_then_never_claimed_and_leaves_the_backlog(outbox: Harness) -> None:
    ids = outbox.add(3)
    await outbox.store.claim_batch(5, lease_seconds=30, claimer="a")
    assert (await outbox.store.backlog()).count == 3
    assert await outbox.store.mark_published([_receipt(ids[0], 1), _receipt(ids[1], 2)]) == 2
    assert await outbox.store.mark_published([_receipt(ids[0], 9)]) == 0
    await outbox.store.release(ids, claimer="a")
    assert [r.event_id for r in await outbox.store.claim_batch(5, lease_seconds=30, claimer="b")] == [ids[2]]
    backlog = await outbox.store.backlog()
    assert backlog.count == 1 and backlog.oldest_age_seconds >= 0


async def test_prune_deletes_only_rows_published_before_the_retention(outbox: Harness) -> None:
    old, recent, _still_pending = outbox.add(3)
    await outbox.store.claim_batch(5, lease_seconds=30, claimer="a")
    await outbox.store.mark_published([_receipt(old, 1, age=timedelta(hours=2)), _receipt(recent, 2)])
    assert await outbox.store.prune_published(older_than_seconds=3600, limit=100) == 1
    assert (await outbox.store.backlog()).count == 1
    assert await outbox.store.mark_published([_receipt(recent, 2)]) == 0  # still there, already marked


async def test_new_rows_wake_a_waiting_relay(outbox: Harness) -> None:
    await outbox.store.wait_for_new_rows(0.5)  # absorb the start-up wake-up
    assert await outbox.store.wait_for_new_rows(0.2) is False
    waiter = asyncio.create_task(outbox.store.wait_for_new_rows(5))
    await asyncio.sleep(0.1)
    outbox.add(1)
    assert await asyncio.wait_for(waiter, 5) is True


async def test_settle_marks_the_acked_rows_and_releases_only_the_failed_ones(outbox: Harness) -> None:
    ids = outbox.add(4)
    await outbox.store.claim_batch(5, lease_seconds=30, claimer="a")
    marked = await outbox.store.settle([_receipt(ids[0], 1), _receipt(ids[1], 2)], [ids[2]], claimer="a")
    assert marked == 2
    # the failed row is free again at once; the un-settled one keeps its lease; the acked ones are done
    assert [r.event_id for r in await outbox.store.claim_batch(5, lease_seconds=30, claimer="b")] == [ids[2]]
    assert (await outbox.store.backlog()).count == 2
    # a row acked by one batch and failed by another counts as published; a repeat marks nothing
    assert await outbox.store.settle([_receipt(ids[2], 3)], [ids[2]], claimer="b") == 1
    assert await outbox.store.settle([_receipt(ids[0], 9)], [ids[0]], claimer="a") == 0
    assert (await outbox.store.backlog()).count == 1


@pytest.mark.parametrize("synchronous", [True, False])
async def test_the_relays_statements_commit_as_its_synchronous_commit_setting_says(
    new_database: Callable[[str], str], synchronous: bool
) -> None:
    """MEMLOOP_RELAY_SYNCHRONOUS_COMMIT=off: the claim, mark and housekeeping sessions commit
    without waiting for the WAL flush (nothing is acknowledged on them; a lost claim or mark is a
    re-publish JetStream deduplicates); on, they wait, as every other session does."""
    admin_url = new_database("relay_sync")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
    conninfo = libpq_url(url_for_role(admin_url, "memloop_relay_app"))
    store = await PgOutboxStore.open(conninfo, synchronous_commit=synchronous)
    try:
        seen = []
        for connection in (store._claims, store._marks, store._house):
            async with connection.statement() as conn:
                row = await (await conn.execute("SHOW synchronous_commit")).fetchone()
                seen.append(row[0] if row else None)
        assert seen == ["on" if synchronous else "off"] * 3
        with psycopg.connect(libpq_url(admin_url)) as conn:  # serving's own sessions are untouched
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    finally:
        await store.close()
