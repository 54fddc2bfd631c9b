"""The context version: how memory names exactly what an agent was shown, and how serving takes it back.

`GetContext` answers with the memories and learned procedures an agent may rely on and a version
that fingerprints them: the memory ids in the order shown and each procedure's (intent key,
version). Memories and procedures are never rewritten in place (a change is a new record or a new
version), so equal versions mean the agent saw the same records. The agent passes the version
back to serving inside `HandleRequest.procedure_versions` under `CONTEXT_VERSION_KEY`, next to the
procedure versions, and the learning event carries it to the worker and memory.

Both ends import this module so the format has one home.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

CONTEXT_VERSION_KEY = "memloop.context"
_FORMAT = re.compile(r"[0-9a-f]{32}")


def context_version(memory_ids: Iterable[str], procedures: Iterable[tuple[str, int]]) -> str:
    """128 bits of SHA-256 over the shown memory ids (in order) and the (intent key, version) pairs
    (sorted, as procedures have no rank), as 32 lower-case hex digits."""
    canonical = json.dumps([list(memory_ids), sorted([key, version] for key, version in procedures)])
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def is_context_version(value: str) -> bool:
    return _FORMAT.fullmatch(value) is not None
