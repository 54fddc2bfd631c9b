"""Row-level security and grants, checked by reaching past the service with raw SQL as its role."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import DBAPIError

from services.common.db import url_for_role
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.test_memory_support import MemoryCluster, apply_request, decision

pytestmark = pytest.mark.integration

APP_ROLE = "memloop_memory_app"
TENANT_TABLES = (
    "memories",
    "memory_sources",
    "memory_vectors",
    "candidates",
    "review_items",
    "processed_events",
    "audit_events",
)


@pytest.fixture
def database(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> str:
    """A memory database holding rows of two tenants, written through the service."""
    url = new_database("memory")
    node = MemoryCluster(spawn, database_url=url, nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path).start(
        "memory-a"
    )
    stub = node.stub()
    for tenant in ("acme", "globex"):
        stub.ApplyLearning(
            apply_request(
                random_ref("evt"),
                decision(f"{tenant} prefers tea", tenant=tenant, intent="drink"),
                decision(f"{tenant} review me", tenant=tenant, outcome=cpb.DECISION_OUTCOME_REVIEW),
                tenant=tenant,
            )
        )
    return url


@pytest.fixture
def app_connection(database: str) -> Iterator[Connection]:
    engine = create_engine(url_for_role(database, APP_ROLE))
    with engine.connect() as connection:
        yield connection
    engine.dispose()


def _tenants_seen(connection: Connection, table: str) -> set[str]:
    return {row[0] for row in connection.execute(text(f"SELECT tenant FROM {table}"))}  # no tenant filter


def test_app_role_with_a_tenant_set_sees_only_that_tenant_without_any_filter(app_connection: Connection) -> None:
    # Given: the service's own role, with tenant acme set for the transaction
    with app_connection.begin():
        app_connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
        # When: every tenant table is read with no WHERE clause
        seen = {table: _tenants_seen(app_connection, table) for table in TENANT_TABLES}
    # Then: only acme's rows exist for it
    assert seen == {table: {"acme"} for table in TENANT_TABLES}


def test_app_role_without_a_tenant_sees_nothing(app_connection: Connection) -> None:
    with app_connection.begin():
        seen = {table: _tenants_seen(app_connection, table) for table in TENANT_TABLES}
    assert seen == {table: set() for table in TENANT_TABLES}
    # The setting is transaction-local: after acme's transaction ends, the next one sees nothing again
    with app_connection.begin():
        app_connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
    with app_connection.begin():
        assert _tenants_seen(app_connection, "memories") == set()


def test_app_role_cannot_write_into_another_tenant(app_connection: Connection) -> None:
    with pytest.raises(DBAPIError, match="row-level security"), app_connection.begin():
        app_connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
        app_connection.execute(
            text(
                "INSERT INTO command_requests (tenant, request_id, operation, result) VALUES ('globex', 'r', 'x', '{}')"
            )
        )


def test_audit_is_append_only_for_the_app_role(app_connection: Connection) -> None:
    for statement in ("UPDATE audit_events SET actor = 'mallory'", "DELETE FROM audit_events"):
        with pytest.raises(DBAPIError, match="permission denied"), app_connection.begin():
            app_connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
            app_connection.execute(text(statement))


def test_app_role_is_neither_owner_nor_superuser(app_connection: Connection) -> None:
    role = app_connection.execute(
        text("SELECT rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = :r"), {"r": APP_ROLE}
    ).one()
    owned = app_connection.execute(
        text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner = :r"), {"r": APP_ROLE}
    ).scalar_one()
    forced = app_connection.execute(
        text("SELECT relname FROM pg_class WHERE relrowsecurity AND relforcerowsecurity AND relname = ANY(:t)"),
        {"t": list(TENANT_TABLES)},
    ).all()
    assert tuple(role) == (False, False, False) and owned == 0
    assert {r[0] for r in forced} == set(TENANT_TABLES)


def test_two_active_records_for_one_intent_are_impossible_even_for_raw_sql(app_connection: Connection) -> None:
    # Given: acme's active 'drink' preference; When: a second active row for that intent is inserted directly
    with pytest.raises(DBAPIError, match="memories_one_active_intent"), app_connection.begin():
        app_connection.execute(text("SELECT set_config('memloop.tenant', 'acme', true)"))
        app_connection.execute(
            text(
                "INSERT INTO memories (memory_id, tenant, user_id, type, text, intent_key, status, confidence,"
                " origin, event_id, status_event_id) VALUES ('m-raw', 'acme', 'alice', 'preference', 'coffee',"
                " 'drink', 'active', 1, 'owner', 'e', 'e')"
            )
        )
    # Then: the partial unique index refused it (the assertion is the raised error)
