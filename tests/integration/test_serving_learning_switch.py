"""MEMLOOP_SERVING_LEARNING=off: serving still answers and commits, but nothing is ever learned.

Serving as a process on real PostgreSQL; the switch is read from its environment. Documented in
docs/CONVENTIONS.md (process environment).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.common.auth_keys import SigningKey
from services.serving.bootstrap import ServingSettings
from tests.integration.serving_relay_support import Stack, alice_request, make_stack

pytestmark = pytest.mark.integration
__all__ = ["make_stack"]


def test_learning_off_commits_the_result_and_content_but_writes_no_event(make_stack: Callable[..., Stack]) -> None:
    # Given serving started with learning switched off, and one with the default (on)
    off, on = make_stack(MEMLOOP_SERVING_LEARNING="off"), make_stack()
    # When each handles the same request
    answers = {}
    for name, stack in (("off", off), ("on", on)):
        request = alice_request(0)
        answers[name] = (stack, request.request_id, stack.stub(stack.token()).HandleRequest(request, timeout=30))
    # Then both answered and committed the result and the redacted content
    for stack, request_id, answer in answers.values():
        assert answer.event_id and stack.count("results", request_id) == 1
        assert stack.count("content_blobs", request_id) == 1
    # But only the default wrote a learning event: with learning off there is nothing to publish
    off_stack, _, _ = answers["off"]
    on_stack, on_request, _ = answers["on"]
    assert off_stack.query("SELECT count(*) FROM outbox")[0][0] == 0
    assert on_stack.count("outbox", on_request) == 1


_KEYS = SigningKey.generate().public_pem()


@pytest.mark.parametrize(("value", "learning"), [("on", True), ("off", False), ("OFF", False)])
def test_the_switch_reads_on_or_off(value: str, learning: bool) -> None:
    env = {"MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS, "MEMLOOP_SERVING_DATABASE_URL": "postgresql://x/y"}
    assert ServingSettings.from_env({**env, "MEMLOOP_SERVING_LEARNING": value}).learning is learning


def test_any_other_value_stops_the_process_naming_the_setting() -> None:
    env = {"MEMLOOP_AUTH_PUBLIC_KEYS": _KEYS, "MEMLOOP_SERVING_DATABASE_URL": "postgresql://x/y"}
    with pytest.raises(SystemExit, match="MEMLOOP_SERVING_LEARNING"):
        ServingSettings.from_env({**env, "MEMLOOP_SERVING_LEARNING": "maybe"})
