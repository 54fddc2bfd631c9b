"""Who wrote the mail, and what is kept of an attachment."""

from __future__ import annotations

import hashlib

import pytest

from services.serving.domain.model import Attachment, attachment_meta, bare_address, is_from_owner


@pytest.mark.parametrize(
    ("sender", "owner", "to", "expected"),
    [
        ("alice@acme.example", "alice@acme.example", "assistant@acme.example", True),
        ('"Alice" <Alice@ACME.example>', "alice@acme.example", "", True),
        ("bob.tan@partner.example", "alice@acme.example", "alice@acme.example", False),
        ("alice@acme.example", "", "alice@acme.example", True),  # owner defaults to the recipient
        ("", "", "", False),  # unknown sender: external (fail closed)
        ("alice@acme.example", "", "", False),  # unknown owner: external (fail closed)
        ("alice@acme.example.evil", "alice@acme.example", "", False),
    ],
)
def test_is_from_owner_compares_bare_addresses_and_fails_closed(
    sender: str, owner: str, to: str, expected: bool
) -> None:
    assert is_from_owner(sender, owner, to) is expected


def test_bare_address_strips_display_name_and_case() -> None:
    assert bare_address('"Bob Tan" <Bob@Partner.example>') == "bob@partner.example"


def test_attachment_meta_keeps_size_and_hash_never_bytes() -> None:
    data = b"call me on +1 415 555 0134"
    meta = attachment_meta(Attachment("notes.txt", "text/plain", data), "notes.txt")
    assert (meta.size_bytes, meta.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert not hasattr(meta, "data")
