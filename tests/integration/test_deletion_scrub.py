"""The deletion's set-based scrubs against real PostgreSQL: one statement over a deletion's items
must do what the domain rule says for each row, and a repeat must change nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import sessionmaker

from services.common.db import run_migrations, url_for_role
from services.memory.bootstrap import MIGRATIONS
from services.memory.deletion.adapters.unit_of_work import SqlDeletionUnitOfWork
from services.memory.deletion.domain.deletion import scrub_outcome

pytestmark = pytest.mark.integration

APP_ROLE = "memloop_memory_app"
TENANT = "acme"


def _outcome(*applied: tuple[str, str]) -> dict[str, Any]:
    return {
        "event_id": "ignored",
        "applied": [{"memory_id": m, "candidate_key": k, "outcome": "store"} for m, k in applied],
    }


OUTCOMES = {
    "e1": _outcome(("m1", "k1"), ("m2", "k2")),  # an event of the deletion
    "e3": _outcome(("m3", "k3")),  # reached only through a candidate of the deletion
    "e9": _outcome(("m9", "k9")),  # not part of it
}


@pytest.fixture
def database(new_database: Callable[[str], str]) -> Iterator[tuple[Engine, sessionmaker[Any]]]:
    url = new_database("deletion_scrub")
    run_migrations(url, MIGRATIONS, app_role=APP_ROLE)
    admin, app = create_engine(url), create_engine(url_for_role(url, APP_ROLE))
    with admin.begin() as connection:
        connection.execute(text("SELECT set_config('memloop.tenant', '*', true)"))
        for event_id, outcome in OUTCOMES.items():
            connection.execute(
                text(
                    "INSERT INTO processed_events (tenant, event_id, user_id, outcome)"
                    " VALUES (:tenant, :event_id, 'alice', CAST(:outcome AS jsonb))"
                ),
                {"tenant": TENANT, "event_id": event_id, "outcome": json.dumps(outcome)},
            )
        connection.execute(
            text(
                "INSERT INTO candidates (candidate_id, tenant, user_id, event_id, ordinal, candidate_key, type, origin,"
                " sensitivity, confidence, text, outcome, policy_version)"
                " VALUES ('c3', :tenant, 'alice', 'e3', 0, 'k3', 'fact', 'owner', 'normal', 1, 'x', 'store', 'p')"
            ),
            {"tenant": TENANT},
        )
        connection.execute(
            text(
                "INSERT INTO deletions (deletion_id, tenant, scope, requested_by) VALUES ('d1', :tenant, 'memory', 't')"
            ),
            {"tenant": TENANT},
        )
        connection.execute(
            text(
                "INSERT INTO deletion_items (deletion_id, kind, item_id, tenant) VALUES"
                " ('d1', 'event', 'e1', :tenant), ('d1', 'candidate', 'c3', :tenant), ('d1', 'memory', 'm1', :tenant)"
            ),
            {"tenant": TENANT},
        )
    yield admin, sessionmaker(app)
    admin.dispose()
    app.dispose()


def _stored(admin: Engine) -> dict[str, dict[str, Any]]:
    with admin.begin() as connection:
        connection.execute(text("SELECT set_config('memloop.tenant', '*', true)"))
        rows = connection.execute(text("SELECT event_id, outcome FROM processed_events")).all()
    return {str(r.event_id): dict(r.outcome) for r in rows}


def _scrub(sessions: sessionmaker[Any], *, only_deleted_memories: bool) -> int:
    with SqlDeletionUnitOfWork(sessions, TENANT) as uow:
        changed = uow.scrub.scrub_outcomes("d1", only_deleted_memories=only_deleted_memories)
        uow.commit()
    return changed


def test_outcomes_are_scrubbed_in_one_statement_exactly_as_the_domain_rule_says(
    database: tuple[Engine, sessionmaker[Any]],
) -> None:
    admin, sessions = database
    # When: a memory-scope deletion scrubs only the keys of the decisions that wrote its memories
    assert _scrub(sessions, only_deleted_memories=True) == 1
    # Then: e1 loses m1's key only; e3 (no deleted memory) and e9 (not covered) keep theirs
    after = _stored(admin)
    assert after["e1"] == scrub_outcome(OUTCOMES["e1"], frozenset({"m1"}))
    assert after["e3"] == OUTCOMES["e3"] and after["e9"] == OUTCOMES["e9"]
    # When: a user- or event-scope deletion scrubs every decision's key, then runs again
    assert _scrub(sessions, only_deleted_memories=False) == 2
    assert _scrub(sessions, only_deleted_memories=False) == 0
    # Then: every covered outcome is the domain rule's result, the other one is untouched
    after = _stored(admin)
    assert after["e1"] == scrub_outcome(OUTCOMES["e1"]) and after["e3"] == scrub_outcome(OUTCOMES["e3"])
    assert after["e9"] == OUTCOMES["e9"]
