"""One contract, two implementations: serving's in-memory unit of work must behave like PostgreSQL's.

Run against both, so the fake the unit tests rely on cannot drift from the real adapter.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy.orm import sessionmaker

from services.common.db import make_engine, run_migrations, url_for_role
from services.common.gen.memloop.v1 import learning_event_pb2
from services.relay.bootstrap import libpq_url
from services.serving.adapters.in_memory import InMemoryServingStore
from services.serving.adapters.postgres.new_request import Notify
from services.serving.adapters.postgres.relay_waker import RelayWaker, connect_for_notify
from services.serving.adapters.repository import SqlServingUnitOfWork
from services.serving.bootstrap import MIGRATIONS_DIR
from services.serving.domain.model import (
    ContentDeletion,
    Email,
    HandleRequestCommand,
    NewResult,
    OutboxState,
    ToolOutcome,
)
from services.serving.service.ports import ServingUnitOfWork, UnitOfWorkFactory
from services.serving.service.use_cases import prepare_result
from tests.helpers import random_ref

pytestmark = pytest.mark.integration


@pytest.fixture(params=["in_memory", "postgres", "postgres-notify-after-commit", "postgres-relay-waker"])
def uow_factory(request: pytest.FixtureRequest) -> Iterator[UnitOfWorkFactory]:
    if request.param == "in_memory":
        yield InMemoryServingStore().unit_of_work
        return
    new_database: Callable[[str], str] = request.getfixturevalue("new_database")
    admin_url = new_database("serving_contract")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
    engine = make_engine(url_for_role(admin_url, "memloop_serving_app"), pool_size=2)
    sessions = sessionmaker(engine, expire_on_commit=False)

    notify: Notify = "after" if request.param == "postgres-notify-after-commit" else "commit"
    waker = RelayWaker(connect_for_notify(libpq_url(url_for_role(admin_url, "memloop_serving_app"))))
    wake = waker.wake if request.param == "postgres-relay-waker" else None
    waker.start()

    def factory(tenant: str) -> ServingUnitOfWork:
        return SqlServingUnitOfWork(sessions, tenant, notify=notify, wake_relays=wake)

    yield factory
    waker.stop()
    engine.dispose()


def _new(tenant: str = "acme", request_id: str = "") -> tuple[HandleRequestCommand, NewResult]:
    command = HandleRequestCommand(
        request_id=request_id or random_ref("req"),
        tenant=tenant,
        user="alice",
        thread="thr",
        route="calendar.schedule",
        procedure_versions={"schedule_meeting": "3"},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-1", "done"),),
        feedback_ref="",
        content=Email("bob@partner.example", "alice@acme.example", "s", "b"),
        attachments=(),
        reply="ok",
        owner_address="",
        trace_id="ab" * 16,
    )
    new = prepare_result(command, lambda text: text, datetime.now(UTC))
    return command, new


def test_add_if_new_inserts_once_and_get_returns_what_was_committed(uow_factory: UnitOfWorkFactory) -> None:
    command, new = _new()
    with uow_factory("acme") as uow:
        assert uow.results.add_if_new(new) is True
        uow.commit()
    with uow_factory("acme") as uow:
        assert uow.results.add_if_new(replace(new, result=replace(new.result, result_id=str(uuid.uuid4())))) is False
        assert uow.results.get(command.request_id) == new.result


def test_nothing_survives_without_commit(uow_factory: UnitOfWorkFactory) -> None:
    command, new = _new()
    event = new.event
    with uow_factory("acme") as uow:
        uow.results.add_if_new(new)
        uow.contents.add(new.content)
        uow.outbox.add(event, span_id="")
    with uow_factory("acme") as uow:
        assert uow.results.get(command.request_id) is None
        assert uow.contents.get(new.content.content_ref) is None
        assert uow.outbox.get(event_id=event.event_id) is None


def test_content_and_outbox_are_tenant_scoped_and_deletion_is_audited_once(uow_factory: UnitOfWorkFactory) -> None:
    command, new = _new()
    event = new.event
    with uow_factory("acme") as uow:
        uow.results.add_if_new(new)
        uow.contents.add(new.content)
        uow.outbox.add(event, span_id="")
        uow.commit()
    ref = new.content.content_ref
    with uow_factory("globex") as uow:
        assert uow.contents.get(ref) is None
        assert uow.outbox.get(event_id=event.event_id) is None
        assert uow.results.get(command.request_id) is None
    with uow_factory("acme") as uow:
        assert uow.contents.get(ref) == new.content
        status = uow.outbox.get(request_id=command.request_id)
        assert status is not None and status.state is OutboxState.PENDING
        assert uow.outbox.get(event_id=event.event_id) == status
    for expected in (True, False):
        with uow_factory("acme") as uow:
            assert uow.contents.delete(ref) is expected
            uow.contents.record_deletion(ContentDeletion("acme", ref, "del-1", datetime.now(UTC), expected))
            uow.commit()


def test_get_many_returns_the_tenants_existing_blobs_by_reference_in_one_call(uow_factory: UnitOfWorkFactory) -> None:
    # Given two blobs of acme, one of them deleted since, and one blob of globex
    (_, kept), (_, deleted), (_, foreign) = _new(), _new(), _new("globex")
    for tenant, new in (("acme", kept), ("acme", deleted), ("globex", foreign)):
        with uow_factory(tenant) as uow:
            assert uow.add_new_request(new, with_event=True) is True
            uow.commit()
    with uow_factory("acme") as uow:
        uow.contents.delete(deleted.content.content_ref)
        uow.commit()

    # When acme reads all three references (one of them twice) in one call
    refs = [kept.content.content_ref, deleted.content.content_ref, foreign.content.content_ref]
    with uow_factory("acme") as uow:
        found = uow.contents.get_many([*refs, kept.content.content_ref])

    # Then only acme's existing blob comes back, as it was stored
    assert found == {kept.content.content_ref: kept.content}


def test_add_new_request_writes_every_row_once_and_a_replay_writes_nothing(uow_factory: UnitOfWorkFactory) -> None:
    command, new = _new()
    with uow_factory("acme") as uow:
        assert uow.add_new_request(new, with_event=True) is True
        uow.commit()
    again = replace(new, result=replace(new.result, result_id=str(uuid.uuid4())))
    with uow_factory("acme") as uow:
        assert uow.add_new_request(again, with_event=True) is False
        assert uow.results.get(command.request_id) == new.result
        assert uow.contents.get(new.content.content_ref) == new.content
        status = uow.outbox.get(request_id=command.request_id)
        assert status is not None and status.state is OutboxState.PENDING
        assert uow.outbox.get(event_id=again.event.event_id) == status


@pytest.mark.parametrize("outcomes", [True, False], ids=["outcomes", "no-outcomes"])
@pytest.mark.parametrize("with_event", [True, False], ids=["event", "no-event"])
def test_a_replay_with_fresh_ids_writes_no_row_whatever_the_requests_shape(
    uow_factory: UnitOfWorkFactory, outcomes: bool, with_event: bool
) -> None:
    # Given a request committed with or without tool outcomes and with or without its event
    command, new = _new()
    if not outcomes:
        new = replace(new, tool_outcomes=())
    with uow_factory("acme") as uow:
        assert uow.add_new_request(new, with_event=with_event, commit=True) is True

    # When the same request comes again with every id fresh (so no other key would refuse a row)
    content = replace(new.content, content_ref=random_ref("cnt"))
    event = replace(new.event, event_id=str(uuid.uuid4()), content_ref=content.content_ref)
    again = replace(new, result=replace(new.result, result_id=str(uuid.uuid4())), content=content, event=event)
    with uow_factory("acme") as uow:
        assert uow.add_new_request(again, with_event=with_event, commit=True) is False

    # Then only the first call's rows exist
    with uow_factory("acme") as uow:
        assert uow.results.get(command.request_id) == new.result
        assert uow.contents.get(content.content_ref) is None
        assert uow.contents.get(new.content.content_ref) == new.content
        assert uow.outbox.get(event_id=event.event_id) is None
        if with_event:
            first = uow.outbox.get(event_id=new.event.event_id)
            assert first is not None and first.state is OutboxState.PENDING


def test_add_new_request_with_commit_has_committed_when_it_returns(uow_factory: UnitOfWorkFactory) -> None:
    # Given a new request added with `commit` (serving's path: the COMMIT in the inserts' round trip)
    command, new = _new()
    with pytest.raises(RuntimeError), uow_factory("acme") as uow:
        assert uow.add_new_request(new, with_event=True, commit=True) is True
        raise RuntimeError("the unit of work ends in error after the call")  # no rollback can undo it now

    # Then every row is there for the next unit of work
    with uow_factory("acme") as uow:
        assert uow.results.get(command.request_id) == new.result
        assert uow.contents.get(new.content.content_ref) == new.content
        status = uow.outbox.get(request_id=command.request_id)
        assert status is not None and status.state is OutboxState.PENDING


def test_a_replay_with_commit_writes_nothing_and_reads_the_first_result_scoped_to_its_tenant(
    uow_factory: UnitOfWorkFactory,
) -> None:
    command, new = _new()
    with uow_factory("acme") as uow:
        assert uow.add_new_request(new, with_event=True, commit=True) is True
    _, globex = _new("globex", request_id=command.request_id)
    with uow_factory("globex") as uow:
        assert uow.add_new_request(globex, with_event=True, commit=True) is True
    again = replace(new, result=replace(new.result, result_id=str(uuid.uuid4())))
    with uow_factory("acme") as uow:
        # When the same request comes again, its transaction committed nothing, then reads in a new one
        assert uow.add_new_request(again, with_event=True, commit=True) is False
        assert uow.results.get(command.request_id) == new.result  # acme's, not globex's: scoped again
        assert uow.contents.get(globex.content.content_ref) is None
        status = uow.outbox.get(request_id=command.request_id)
        assert status is not None and status == uow.outbox.get(event_id=new.event.event_id)


def test_add_new_request_without_event_writes_no_outbox_row(uow_factory: UnitOfWorkFactory) -> None:
    command, new = _new()
    with uow_factory("acme") as uow:
        assert uow.add_new_request(new, with_event=False) is True
        uow.commit()
    with uow_factory("acme") as uow:
        assert uow.results.get(command.request_id) == new.result
        status = uow.outbox.get(event_id=new.event.event_id)
    # Then nothing waits for the relay: no row at all, or (PostgreSQL, which rebuilds a pruned event's
    # status from its result row so forget-by-request-id survives pruning) a status never published
    assert status is None or (status.state, status.published_at, status.stream_sequence) == (
        OutboxState.PUBLISHED,
        None,
        0,
    )


def test_another_tenants_rows_are_invisible_in_the_same_transaction_shape(uow_factory: UnitOfWorkFactory) -> None:
    """The single-round-trip insert scopes the transaction: after it, reads in that very transaction
    see only the tenant's own rows."""
    acme_command, acme = _new("acme")
    with uow_factory("acme") as uow:
        assert uow.add_new_request(acme, with_event=True) is True
        uow.commit()
    _, globex = _new("globex", request_id=acme_command.request_id)
    with uow_factory("globex") as uow:
        assert uow.add_new_request(globex, with_event=True) is True  # the same request id, another tenant
        assert uow.results.get(acme_command.request_id) == globex.result
        assert uow.contents.get(acme.content.content_ref) is None
        assert uow.outbox.get(event_id=acme.event.event_id) is None


@pytest.mark.parametrize("commit", [False, True])
def test_rls_rejects_a_row_of_another_tenant_sent_in_the_single_round_trip(
    new_database: Callable[[str], str], commit: bool
) -> None:
    """Row-level security, not the code, keeps tenants apart: a unit of work scoped to acme that is
    handed globex's rows fails as a whole (WITH CHECK) and leaves nothing behind."""
    admin_url = new_database("serving_rls")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
    engine = make_engine(url_for_role(admin_url, "memloop_serving_app"), pool_size=2)
    sessions = sessionmaker(engine, expire_on_commit=False)
    try:
        command, globex = _new("globex")
        with SqlServingUnitOfWork(sessions, "acme") as uow, pytest.raises(psycopg.errors.InsufficientPrivilege):
            uow.add_new_request(globex, with_event=True, commit=commit)
        for tenant in ("acme", "globex"):
            with SqlServingUnitOfWork(sessions, tenant) as uow:
                assert uow.results.get(command.request_id) is None
                assert uow.contents.get(globex.content.content_ref) is None
    finally:
        engine.dispose()


def test_delete_contents_does_what_one_delete_per_blob_does_for_all_of_them_at_once(
    uow_factory: UnitOfWorkFactory,
) -> None:
    by_ref, by_event, other_tenant = _new()[1], _new()[1], _new("globex")[1]
    for tenant, new in (("acme", by_ref), ("acme", by_event), ("globex", other_tenant)):
        with uow_factory(tenant) as uow:
            assert uow.add_new_request(new, with_event=True)
            uow.commit()
    refs, events = [by_ref.content.content_ref, "cnt_never_existed"], [by_event.event.event_id]
    now = datetime.now(UTC)
    with uow_factory("acme") as uow:
        # the globex event is named too: RLS keeps it out of acme's statements
        assert uow.delete_contents(refs, [*events, other_tenant.event.event_id], "del-9", now) == 2
        uow.commit()
    with uow_factory("acme") as uow:
        assert uow.delete_contents(refs, events, "del-9", now) == 0  # idempotent
        for new in (by_ref, by_event):
            assert uow.contents.get(new.content.content_ref) is None
            stored = uow.results.get(new.result.request_id)
            assert stored is not None and stored.reply == ""
            status = uow.outbox.get(request_id=new.result.request_id)
            assert status is not None
            event = learning_event_pb2.LearningEvent.FromString(status.payload)
            assert [o.summary for o in event.tool_outcomes] == [""]
    with uow_factory("globex") as uow:
        assert uow.contents.get(other_tenant.content.content_ref) == other_tenant.content
        kept = uow.results.get(other_tenant.result.request_id)
        assert kept is not None and kept.reply == "ok"


def test_a_connection_that_committed_a_request_in_its_round_trip_goes_back_to_the_pool_transactional(
    new_database: Callable[[str], str],
) -> None:
    """Serving's commit path runs its statements as one implicit transaction (autocommit for the
    call): the next unit of work on that very connection must again be all or nothing."""
    admin_url = new_database("serving_implicit")
    run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
    engine = make_engine(url_for_role(admin_url, "memloop_serving_app"), pool_size=1)
    engine.pool._max_overflow = 0  # type: ignore[attr-defined]  # one connection: the next unit of work gets it
    sessions = sessionmaker(engine, expire_on_commit=False)
    try:
        # given: a request committed in its round trip, and one refused by RLS, on the one connection
        first_command, first = _new("acme")
        with SqlServingUnitOfWork(sessions, "acme") as uow:
            assert uow.add_new_request(first, with_event=True, commit=True)
        _, refused = _new("globex")
        with SqlServingUnitOfWork(sessions, "acme") as uow, pytest.raises(psycopg.errors.InsufficientPrivilege):
            uow.add_new_request(refused, with_event=True, commit=True)
        # when: a unit of work writes on it and ends without committing
        second_command, second = _new("acme")
        with SqlServingUnitOfWork(sessions, "acme") as uow:
            assert uow.add_new_request(second, with_event=True) is True
        # then: the first request is there, the uncommitted one is not
        with SqlServingUnitOfWork(sessions, "acme") as uow:
            assert uow.results.get(first_command.request_id) == first.result
            assert uow.results.get(second_command.request_id) is None
    finally:
        engine.dispose()
