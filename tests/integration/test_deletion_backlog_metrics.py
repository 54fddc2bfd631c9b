"""The deletion backlog gauges read the real ledger: open steps by location and state, and the age
of the oldest deletion still waiting on each location (what MemloopDeletionStepStuck alerts on)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import sessionmaker

from services.common.db import run_migrations, url_for_role
from services.memory.bootstrap import MIGRATIONS
from services.memory.deletion.adapters.metrics import DeletionBacklog

pytestmark = pytest.mark.integration

APP_ROLE = "memloop_memory_app"
_DELETION = text(
    "INSERT INTO deletions (deletion_id, tenant, scope, user_id, requested_by, created_at)"
    " VALUES (:id, :tenant, 'user', 'alice', 'operator', now() - make_interval(secs => :age))"
)
_STEP = text("INSERT INTO deletion_steps (deletion_id, location, tenant, state) VALUES (:id, :loc, :tenant, :state)")


@pytest.fixture
def engines(new_database: Callable[[str], str]) -> Iterator[tuple[Engine, Engine]]:
    url = new_database("deletion_backlog")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    admin, app = create_engine(url), create_engine(url_for_role(url, APP_ROLE))
    yield admin, app
    admin.dispose()
    app.dispose()


def _add(admin: Engine, deletion_id: str, tenant: str, age: float, steps: dict[str, str]) -> None:
    with admin.begin() as connection:
        connection.execute(_DELETION, {"id": deletion_id, "tenant": tenant, "age": age})
        for location, state in steps.items():
            connection.execute(_STEP, {"id": deletion_id, "loc": location, "tenant": tenant, "state": state})


def _gauge(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_open_steps_and_their_age_are_published_across_tenants_and_drop_to_zero_when_done(
    engines: tuple[Engine, Engine],
) -> None:
    admin, app = engines
    # Given two tenants' deletions: one acknowledged two hours ago with a vectors step still
    # pending and one replica that failed, one ten minutes ago with its vectors step pending
    _add(
        admin,
        "d-old",
        "acme",
        7200,
        {"retrieval": "done", "vectors": "pending", "replica:memory-0": "failed", "replica:memory-1": "pending"},
    )
    _add(admin, "d-new", "globex", 600, {"vectors": "pending", "content_blobs": "done"})
    backlog = DeletionBacklog(sessionmaker(app))

    # When the backlog is published (as the app role, in the maintenance scope)
    figures = {(f.location, f.state): f for f in backlog.publish()}

    # Then open steps are counted by location, replica ids grouped, done steps left out
    assert {key: f.steps for key, f in figures.items()} == {
        ("vectors", "pending"): 2,
        ("replica", "failed"): 1,
        ("replica", "pending"): 1,
    }
    assert _gauge("memloop_deletion_open_steps", location="vectors", state="pending") == 2
    assert _gauge("memloop_deletion_open_steps", location="replica", state="failed") == 1
    # and the age is that of the oldest deletion waiting there
    vectors_age = _gauge("memloop_deletion_oldest_open_step_age_seconds", location="vectors")
    assert vectors_age is not None and 7200 <= vectors_age < 7200 + 120
    replica_age = _gauge("memloop_deletion_oldest_open_step_age_seconds", location="replica")
    assert replica_age is not None and 7200 <= replica_age < 7200 + 120

    # When every step is done
    with admin.begin() as connection:
        connection.execute(text("UPDATE deletion_steps SET state = 'done'"))
    assert backlog.publish() == []

    # Then the gauges fall back to zero instead of keeping the last figures
    assert _gauge("memloop_deletion_open_steps", location="vectors", state="pending") == 0
    assert _gauge("memloop_deletion_open_steps", location="replica", state="failed") == 0
    assert _gauge("memloop_deletion_oldest_open_step_age_seconds", location="vectors") == 0
    assert _gauge("memloop_deletion_oldest_open_step_age_seconds", location="replica") == 0
