"""Serving's use cases on the in-memory store: atomicity, idempotency, redaction before storage."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from services.common.errors import InvalidArgument, NotFound
from services.common.gen.memloop.v1 import learning_event_pb2
from services.common.redaction import RedactionMode, Redactor
from services.serving.adapters.in_memory import InMemoryServingStore
from services.serving.domain.model import Attachment, Email, HandleRequestCommand, ToolOutcome
from services.serving.service import use_cases
from services.serving.service.use_cases import ServingDeps

_PHONE = "+1 415 555 0134"


@pytest.fixture
def store() -> InMemoryServingStore:
    return InMemoryServingStore()


@pytest.fixture
def deps(store: InMemoryServingStore) -> ServingDeps:
    redactor = Redactor(RedactionMode.FAST)
    return ServingDeps(uow_factory=store.unit_of_work, redact=lambda text: redactor.redact(text).text)


def _command(request_id: str = "req-1", **changes: object) -> HandleRequestCommand:
    base = HandleRequestCommand(
        request_id=request_id,
        tenant="acme",
        user="alice",
        thread="thr-bob-sync",
        route="calendar.schedule",
        procedure_versions={"schedule_meeting": "3"},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-evt-7781", f"Called {_PHONE}"),),
        feedback_ref="fb-1",
        content=Email("bob.tan@partner.example", "alice@acme.example", "Sync", f"Call me on {_PHONE}."),
        attachments=(Attachment("notes.txt", "text/plain", _PHONE.encode()),),
        reply="Booked.",
        owner_address="alice@acme.example",
        trace_id="ab" * 16,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_handle_request_commits_result_redacted_content_and_a_reference_only_event(
    store: InMemoryServingStore, deps: ServingDeps
) -> None:
    result = use_cases.handle_request(_command(), deps)

    tables = store.tables
    content = tables.contents[result.content_ref]
    assert _PHONE not in content.email.body and "[PHONE]" in content.email.body
    assert content.from_owner is False
    assert content.attachments[0].size_bytes == len(_PHONE)
    assert _PHONE not in tables.tool_outcomes[("acme", "req-1")][0].summary
    [(tenant, request_id, payload)] = tables.outbox.values()
    assert (tenant, request_id) == ("acme", "req-1")
    event = learning_event_pb2.LearningEvent.FromString(payload)
    assert (event.event_id, event.trace_id, event.content_ref) == (result.event_id, "ab" * 16, result.content_ref)
    assert _PHONE.encode() not in payload and b"Call me" not in payload
    assert tables.notifications == 1


def test_a_repeat_returns_the_first_result_marked_replayed_and_writes_nothing(
    store: InMemoryServingStore, deps: ServingDeps
) -> None:
    first = use_cases.handle_request(_command(), deps)
    again = use_cases.handle_request(_command(reply="something else"), deps)

    assert again == replace(first, replayed=True)
    assert len(store.tables.results) == len(store.tables.outbox) == len(store.tables.contents) == 1


def test_concurrent_calls_with_one_request_id_give_one_outcome(store: InMemoryServingStore, deps: ServingDeps) -> None:
    with ThreadPoolExecutor(max_workers=10) as pool:
        results = list(pool.map(lambda _: use_cases.handle_request(_command(), deps), range(10)))

    assert len({r.event_id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1
    assert len(store.tables.outbox) == 1


def test_invalid_input_writes_nothing(store: InMemoryServingStore, deps: ServingDeps) -> None:
    with pytest.raises(InvalidArgument):
        use_cases.handle_request(_command(procedure_versions={"x": "0"}), deps)
    assert not store.tables.results and not store.tables.outbox and not store.tables.contents


def test_a_missing_trace_id_gets_a_fresh_one(deps: ServingDeps) -> None:
    result = use_cases.handle_request(_command(trace_id=""), deps)
    assert len(result.trace_id) == 32 and int(result.trace_id, 16)


def test_read_and_delete_content_are_tenant_scoped_and_delete_is_idempotent(
    store: InMemoryServingStore, deps: ServingDeps
) -> None:
    result = use_cases.handle_request(_command(), deps)
    with pytest.raises(NotFound):
        use_cases.read_content("globex", result.content_ref, deps)
    assert use_cases.read_content("acme", result.content_ref, deps).user == "alice"

    assert use_cases.delete_content("acme", result.content_ref, "del-1", deps) is True
    assert use_cases.delete_content("acme", result.content_ref, "del-1", deps) is False
    with pytest.raises(NotFound):
        use_cases.read_content("acme", result.content_ref, deps)
    assert list(store.tables.deletions) == [("acme", result.content_ref, "del-1")]


def test_get_outbox_event_by_event_or_request_id(deps: ServingDeps) -> None:
    result = use_cases.handle_request(_command(), deps)
    by_event = use_cases.get_outbox_event("acme", result.event_id, "", deps)
    by_request = use_cases.get_outbox_event("acme", "", "req-1", deps)
    assert by_event == by_request
    with pytest.raises(InvalidArgument):
        use_cases.get_outbox_event("acme", "not-a-uuid", "", deps)
    with pytest.raises(NotFound):
        use_cases.get_outbox_event("globex", result.event_id, "", deps)


def test_delete_content_by_event_finds_the_blob_and_blanks_the_requests_text(
    store: InMemoryServingStore, deps: ServingDeps
) -> None:
    # Given: a handled request with a tool outcome summary
    result = use_cases.handle_request(_command(), deps)
    # When: the deletion workflow names only its event (twice), and an event serving never had
    first = use_cases.delete_content("acme", "", "del-1", deps, event_id=result.event_id)
    again = use_cases.delete_content("acme", "", "del-1", deps, event_id=result.event_id)
    unknown = use_cases.delete_content("acme", "", "del-1", deps, event_id="evt-not-a-uuid")
    # Then: the blob went once; the reply, the summaries and the payload's summaries are blank
    assert (first, again, unknown) == (True, False, False)
    with pytest.raises(NotFound):
        use_cases.read_content("acme", result.content_ref, deps)
    stored = use_cases.get_outbox_event("acme", result.event_id, "", deps)
    event = learning_event_pb2.LearningEvent.FromString(stored.payload)
    assert [o.summary for o in event.tool_outcomes] == [""] and event.content_ref == result.content_ref
    assert store.tables.results[("acme", "req-1")].reply == ""
    with pytest.raises(InvalidArgument):
        use_cases.delete_content("acme", "", "del-1", deps)


def test_delete_contents_skips_non_uuid_events_and_rejects_too_many_items(
    store: InMemoryServingStore, deps: ServingDeps
) -> None:
    result = use_cases.handle_request(_command(), deps)
    assert use_cases.delete_contents("acme", [], ["evt-not-a-uuid", result.event_id], "del-1", deps) == 1
    assert use_cases.delete_contents("acme", [], [result.event_id], "del-1", deps) == 0
    assert use_cases.delete_contents("acme", [], ["evt-not-a-uuid"], "del-1", deps) == 0
    with pytest.raises(InvalidArgument) as refs:
        use_cases.delete_contents("acme", ["cnt"] * (use_cases.MAX_BATCH + 1), [], "del-1", deps)
    with pytest.raises(InvalidArgument) as deletion:
        use_cases.delete_contents("acme", [result.content_ref], [], "", deps)
    assert (refs.value.violations[0].field, deletion.value.violations[0].field) == ("content_refs", "deletion_id")
    assert list(store.tables.deletions) == [("acme", result.content_ref, "del-1")]


def test_a_batch_read_answers_each_reference_in_order_and_a_forgotten_blob_only_in_its_own_result(
    deps: ServingDeps,
) -> None:
    # Given three requests handled, the second one's content then forgotten
    first, second, third = (use_cases.handle_request(_command(f"req-{i}"), deps) for i in range(3))
    use_cases.delete_content("acme", second.content_ref, "del-1", deps)

    # When the three references (and one never issued) are read in one batch, and by another tenant
    reads = use_cases.read_contents(
        "acme", [third.content_ref, second.content_ref, "never-issued", first.content_ref], deps
    )
    foreign = use_cases.read_contents("globex", [first.content_ref], deps)

    # Then each has its own result, in request order: the blobs, and CONTENT_NOT_FOUND for the others
    assert [r.content_ref for r in reads] == [third.content_ref, second.content_ref, "never-issued", first.content_ref]
    assert [r.error_reason for r in reads] == ["", "CONTENT_NOT_FOUND", "CONTENT_NOT_FOUND", ""]
    assert reads[0].content is not None and reads[0].content == use_cases.read_content("acme", third.content_ref, deps)
    assert reads[1].content is None and reads[2].content is None
    # And a tenant serving never saw learns nothing of acme's blobs: its tenant is unknown
    assert [(r.content, r.error_reason) for r in foreign] == [(None, "TENANT_NOT_FOUND")]


def test_a_batch_read_with_an_empty_reference_is_refused_naming_it(deps: ServingDeps) -> None:
    result = use_cases.handle_request(_command(), deps)
    with pytest.raises(InvalidArgument) as refused:
        use_cases.read_contents("acme", [result.content_ref, ""], deps)
    assert refused.value.violations[0].field == "content_refs[1]"
