"""AIP-158 pagination with opaque keyset tokens.

A token is the last key of the page (a row id or sequence) plus a fingerprint of the request's
filters: a token replayed with different filters, or tampered with, is INVALID_ARGUMENT rather
than a silently wrong page. Keyset (not offset) paging stays correct while rows are inserted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from services.common.errors import InvalidArgument, validate_page_size

T = TypeVar("T")


@dataclass(frozen=True)
class PageRequest:
    size: int
    after: int
    fingerprint: str


def page_request(
    page_size: int, page_token: str, *, default: int, maximum: int, filters: Sequence[object]
) -> PageRequest:
    """Validate size and token; raises InvalidArgument naming `page_size` or `page_token`."""
    size = validate_page_size(page_size, default=default, maximum=maximum)
    fingerprint = hashlib.sha256(repr(tuple(filters)).encode()).hexdigest()[:16]
    return PageRequest(size=size, after=_decode(page_token, fingerprint), fingerprint=fingerprint)


def _decode(token: str, fingerprint: str) -> int:
    if not token:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4)))
        after, seen = int(data["a"]), str(data["f"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise InvalidArgument("page_token", "is not a token returned by this method") from None
    if seen != fingerprint or after < 0:
        raise InvalidArgument("page_token", "belongs to a request with other filters")
    return after


def _encode(after: int, fingerprint: str) -> str:
    raw = json.dumps({"a": after, "f": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[int, T]], request: PageRequest) -> Page[T]:
        """`rows` were fetched with limit size + 1: one extra row means there is a next page."""
        items = [item for _, item in rows[: request.size]]
        token = _encode(rows[request.size - 1][0], request.fingerprint) if len(rows) > request.size else ""
        return cls(items=items, next_page_token=token)
