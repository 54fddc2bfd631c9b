"""Opaque, filter-bound page tokens (AIP-158)."""

from __future__ import annotations

import pytest

from services.common.errors import InvalidArgument
from services.memory.core.service.pagination import Page, page_request


def test_a_token_continues_after_the_last_key_of_its_page() -> None:
    first = page_request(2, "", default=50, maximum=500, filters=("acme", "alice"))
    page = Page.from_rows([(10, "a"), (11, "b"), (12, "c")], first)
    assert page.items == ["a", "b"] and page.next_page_token
    following = page_request(2, page.next_page_token, default=50, maximum=500, filters=("acme", "alice"))
    assert following.after == 11
    assert Page.from_rows([(12, "c")], following).next_page_token == ""


def test_size_defaults_clamps_and_rejects_negative() -> None:
    assert page_request(0, "", default=50, maximum=500, filters=()).size == 50
    assert page_request(9999, "", default=50, maximum=500, filters=()).size == 500
    with pytest.raises(InvalidArgument) as caught:
        page_request(-1, "", default=50, maximum=500, filters=())
    assert caught.value.violations[0].field == "page_size"


@pytest.mark.parametrize("token", ["garbage", "eyJhIjoiYiJ9", "%%%"])
def test_a_foreign_or_tampered_token_is_invalid(token: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        page_request(10, token, default=50, maximum=500, filters=("acme",))
    assert caught.value.violations[0].field == "page_token"


def test_a_token_replayed_with_other_filters_is_invalid() -> None:
    page = Page.from_rows([(1, "a"), (2, "b")], page_request(1, "", default=50, maximum=500, filters=("alice",)))
    with pytest.raises(InvalidArgument):
        page_request(1, page.next_page_token, default=50, maximum=500, filters=("bob",))
