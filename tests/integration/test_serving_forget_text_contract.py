"""Forgetting a request's text in serving (the deletion workflow's reach), held to one contract for
PostgreSQL and the in-memory store: the reply, the tool outcome summaries and those summaries inside
the outbox payload are blanked; ids and references stay; another tenant finds nothing."""

from __future__ import annotations

import pytest

from services.common.gen.memloop.v1 import learning_event_pb2
from services.serving.service.ports import UnitOfWorkFactory
from tests.integration.test_serving_repository_contract import _new, uow_factory

pytestmark = pytest.mark.integration
__all__ = ["uow_factory"]


@pytest.mark.parametrize("by", ["content_ref", "event_id"])
def test_forget_text_blanks_reply_summaries_and_payload_and_is_idempotent(
    uow_factory: UnitOfWorkFactory, by: str
) -> None:
    # Given: a committed request with a tool outcome summary, its blob and its outbox event
    command, new = _new()
    with uow_factory("acme") as uow:
        uow.results.add_if_new(new)
        uow.results.add_tool_outcomes(command.request_id, new.tool_outcomes)
        uow.contents.add(new.content)
        uow.outbox.add(new.event, span_id="")
        uow.commit()
    key = {"content_ref": new.content.content_ref} if by == "content_ref" else {"event_id": new.event.event_id}
    # When: another tenant tries, then acme forgets it twice
    with uow_factory("globex") as uow:
        assert uow.results.forget_text(**key) is None
    changed = []
    for _ in range(2):
        with uow_factory("acme") as uow:
            forgotten = uow.results.forget_text(**key)
            assert forgotten is not None
            changed.append(uow.outbox.forget_text(forgotten.request_id))
            uow.commit()
    # Then: the request is found each time, the payload changed once, and no text is left
    assert forgotten is not None
    assert forgotten.request_id == command.request_id and forgotten.content_ref == new.content.content_ref
    assert changed == [True, False]
    with uow_factory("acme") as uow:
        result = uow.results.get(command.request_id)
        status = uow.outbox.get(request_id=command.request_id)
    assert result is not None and result.reply == "" and result.content_ref == new.content.content_ref
    assert status is not None
    event = learning_event_pb2.LearningEvent.FromString(status.payload)
    assert [(o.tool, o.ref, o.summary) for o in event.tool_outcomes] == [("calendar.create_event", "cal-1", "")]
    assert event.event_id == new.event.event_id and event.content_ref == new.content.content_ref
