"""E-mail addresses: replaced, but the domain is kept (it carries provenance, not a person)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from services.common.pii.model import FindingKind, Hit

_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9._%+\-]{1,64}$")
_EMAIL_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)+")


def emails(text: str) -> Iterator[Hit]:
    at = text.find("@")
    while at != -1:
        local = _EMAIL_LOCAL.search(text, max(0, at - 64), at)
        domain = _EMAIL_DOMAIN.match(text, at + 1)
        if local and domain:
            start = local.start()
            if start == 0 or text[start - 1] != "[":
                replacement = f"[EMAIL@{domain.group().lower()}]"
                yield start, domain.end(), FindingKind.EMAIL, "email", replacement
        at = text.find("@", at + 1)
