"""The words every part of the loop shares: memory types, origins, sensitivities, outcomes, candidates.

Plain dataclasses and enums only (standard library), so the domain layers of worker, policy and
memory can all depend on them without depending on each other or on protobuf. Conversion to and
from protobuf lives in `services.common.convert`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum


class MemoryType(StrEnum):
    EPISODE = "episode"
    PREFERENCE = "preference"
    FACT = "fact"
    PROCEDURAL = "procedural"


class Origin(StrEnum):
    TOOL_OUTCOME = "tool_outcome"
    OWNER = "owner"
    EXTERNAL_EMAIL = "external_email"
    OPERATOR = "operator"
    CONSOLIDATION = "consolidation"


class Sensitivity(StrEnum):
    NORMAL = "normal"
    PERSONAL = "personal"
    RESTRICTED = "restricted"
    SECRET = "secret"


class Outcome(StrEnum):
    STORE = "store"
    REVIEW = "review"
    REJECT = "reject"


_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s:@.\-\[\]]")


def normalise_meaning(text: str) -> str:
    """Fold case, Unicode compatibility forms, punctuation and spacing.

    Two candidates whose texts normalise equal are treated as the same meaning, which is what
    makes "the same fact from two events is one memory" hold across trivial rewordings.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", _PUNCT.sub(" ", folded)).strip()


def candidate_key(tenant: str, user: str, memory_type: MemoryType, text: str, version: int = 1) -> str:
    """The idempotency key of a candidate write: meaning plus version, scoped to tenant and user."""
    material = "\x1f".join([tenant, user, memory_type.value, normalise_meaning(text), str(version)])
    return hashlib.sha256(material.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Candidate:
    """A proposed memory. A proposal, never a write: only policy decides what happens to it."""

    candidate_key: str
    type: MemoryType
    origin: Origin
    sensitivity: Sensitivity
    confidence: float
    text: str
    event_id: str
    trace_id: str
    intent_key: str = ""
    version: int = 1


@dataclass(frozen=True)
class Reason:
    """A machine-readable reason (UPPER_SNAKE code) and its human explanation."""

    code: str
    message: str


@dataclass(frozen=True)
class Decision:
    """Policy's verdict on one candidate, carrying the rules' version for the audit trail."""

    candidate: Candidate
    outcome: Outcome
    policy_version: str
    reasons: tuple[Reason, ...] = field(default_factory=tuple)
    # Policy's signature (services.common.decision_signing); empty until policy signs it.
    signature: bytes = b""
