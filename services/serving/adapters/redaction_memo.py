"""A memo in front of serving's redactor: a short text seen before is not scanned again.

Thorough redaction is the largest pure-Python cost of a HandleRequest (~1.4 ms of CPU for Alice's
requests, ~170 µs per short field: every detector runs whatever the length), and the short fields
repeat: the owner's address, the user's own address (redacted twice per request, as `to` and as the
event's owner), frequent correspondents, templated subjects and replies. `Redactor.redact` is a
pure function of the text (stateless after construction), so the memo changes no output.

The memo keeps no raw text: its keys are keyed BLAKE2b digests (a key drawn per process, so a
digest cannot be matched against a list of guessed addresses elsewhere), its values the redacted
text, which is what serving stores anyway. It is bounded in entries and in text length (a long
body rarely repeats and would only cost memory); when full, the oldest entry goes.
"""

from __future__ import annotations

import hashlib
import secrets
import threading

from services.serving.service.ports import Redact

MAX_ENTRIES = 4096
MAX_CHARS = 256


class MemoRedact:
    """`redact`, with the results for short texts remembered (thread-safe)."""

    def __init__(self, redact: Redact, *, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        self._redact = redact
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._key = secrets.token_bytes(32)
        self._memo: dict[bytes, str] = {}
        self._lock = threading.Lock()  # inserts and evictions only; a hit is one dict read

    def __call__(self, text: str) -> str:
        if not text or len(text) > self._max_chars:
            return self._redact(text)
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16, key=self._key).digest()
        found = self._memo.get(digest)
        if found is not None:
            return found
        redacted = self._redact(text)
        with self._lock:
            while len(self._memo) >= self._max_entries:
                del self._memo[next(iter(self._memo))]  # dicts keep insertion order: the oldest
            self._memo[digest] = redacted
        return redacted

    def __len__(self) -> int:
        return len(self._memo)
