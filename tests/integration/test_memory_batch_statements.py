"""A learning batch's statements on real PostgreSQL (the use case on the memory repositories, as the
app role): their number does not grow with the batch's STORE decisions, whether they create,
supersede or reinforce (`repositories/memory_writes.py`), and the writes are the per-event ones.

Counted from libpq's trace of the pool's connections: statements (`Bind`) and round trips (`Sync`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg.pq import Trace
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import sessionmaker

from services.common.db import run_migrations, url_for_role
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Sensitivity
from services.memory.bootstrap import MIGRATIONS
from services.memory.core.adapters.embedders import HashingEmbedder
from services.memory.core.adapters.in_memory import RecordingMetrics
from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.core.domain.outcome import ApplyOutcome
from services.memory.core.service.apply_learning import ApplyLearning, apply_learning_batch
from services.memory.core.service.deps import MemoryPorts
from services.memory.core.service.ports import MemoryUnitOfWork, Tuning

pytestmark = pytest.mark.integration

APP_ROLE = "memloop_memory_app"
START = datetime(2026, 11, 2, 9, tzinfo=UTC)


class _Signed:
    def verify(self, decision: Decision, *, tenant: str, user: str, event_id: str) -> bool:
        return True


class _NoEffects:
    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None:
        pass

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        pass


@pytest.fixture
def engine(new_database: Callable[[str], str]) -> Iterator[Engine]:
    url = new_database("batch_statements")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    app = create_engine(url_for_role(url, APP_ROLE), pool_size=2, max_overflow=0)
    yield app
    app.dispose()


def _ports(engine: Engine) -> MemoryPorts:
    sessions = sessionmaker(engine)

    def uow(tenant: str) -> MemoryUnitOfWork:
        return SqlMemoryUnitOfWork(sessions, tenant)

    return MemoryPorts(
        uow=uow,
        embedder=HashingEmbedder(),
        index=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        effects=_NoEffects(),
        metrics=RecordingMetrics(),
        tuning=Tuning(),
        decisions=_Signed(),
        active=None,  # type: ignore[arg-type]
    )


def _event(event_id: str, user: str, text_: str, intent: str, minutes: int) -> ApplyLearning:
    candidate = Candidate(
        candidate_key=f"key-{user}-{text_}",
        type=MemoryType.PREFERENCE,
        origin=Origin.OWNER,
        sensitivity=Sensitivity.NORMAL,
        confidence=0.9,
        text=text_,
        event_id=event_id,
        trace_id="ab" * 16,
        intent_key=intent,
    )
    return ApplyLearning(
        tenant="acme",
        user=user,
        event_id=event_id,
        trace_id="ab" * 16,
        actor="worker",
        decisions=(Decision(candidate, Outcome.STORE, "policy-v1"),),
        event_time=START + timedelta(minutes=minutes),
    )


def _statements(engine: Engine, batch: list[ApplyLearning], ports: MemoryPorts, trace: Path) -> Counter[str]:
    """The protocol messages the batch's apply sent to the server, by kind: `Bind` and `Query` are
    statements run, `Sync` ends a round trip (libpq's trace of every pooled connection)."""
    trace.write_text("")
    results = apply_learning_batch(batch, ports)
    assert all(isinstance(r, ApplyOutcome) and not r.already_processed for r in results)
    sent: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) > 2 and fields[0] == "F":
            sent[fields[2].split(" ")[0]] += 1
    return sent


def test_a_batchs_statements_do_not_grow_with_its_stores(
    engine: Engine, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ports = _ports(engine)
    trace = tmp_path / "libpq.trace"
    files: list[Any] = []

    @event.listens_for(engine, "connect")
    def _traced(dbapi_connection: Any, record: Any) -> None:
        out = trace.open("a")  # closed with the test's files
        files.append(out)
        dbapi_connection.pgconn.trace(out.fileno())
        dbapi_connection.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)

    request.addfinalizer(lambda: [out.close() for out in files])

    engine.dispose()  # every connection from here on is traced
    # When batches of 4 and of 16 events create one memory each (one user per event, one intent each)
    small = _statements(engine, [_event(f"c4-{i}", f"u{i}", "tea", "drink", 1) for i in range(4)], ports, trace)
    large = _statements(engine, [_event(f"c16-{i}", f"v{i}", "tea", "drink", 1) for i in range(16)], ports, trace)
    # And a batch of 16 supersedes and 16 reinforcements of those records, for the same users
    changes = [_event(f"s-{i}", f"v{i}", "coffee", "drink", 2) for i in range(8)]
    changes += [_event(f"r-{i}", f"v{i}", "tea", "drink", 3) for i in range(8, 16)]
    mixed = _statements(engine, changes, ports, trace)
    # Then each batch ran the same statements in the same round trips, however many records it
    # wrote; changing existing records (superseding, restating) is one UPDATE more for all of them
    assert (small["Bind"], small["Sync"]) == (large["Bind"], large["Sync"])
    assert mixed["Bind"] == small["Bind"] + 1 and mixed["Sync"] == small["Sync"]
    assert small["Sync"] <= 5
    # And the writes are the per-event ones: one active record per user and intent, with its lineage
    with engine.begin() as connection:
        connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
        rows = connection.execute(
            text(
                "SELECT user_id, text, status, supersedes IS NOT NULL AS linked,"
                " (SELECT count(*) FROM memory_sources s WHERE s.memory_id = m.memory_id) AS sources"
                " FROM memories m WHERE user_id LIKE 'v%' ORDER BY user_id, row_id"
            )
        ).all()
    by_user: dict[str, list[tuple[str, str, bool, int]]] = {}
    for row in rows:
        by_user.setdefault(row.user_id, []).append((row.text, row.status, row.linked, row.sources))
    for i in range(16):
        expected = (
            [("tea", "superseded", False, 1), ("coffee", "active", True, 1)] if i < 8 else [("tea", "active", False, 2)]
        )
        assert by_user[f"v{i}"] == expected
