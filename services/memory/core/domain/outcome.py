"""The outcome of applying one learning event: what each decision became.

Stored with the processed event and returned verbatim to every repeat, so a redelivered event
observes exactly what the first delivery did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.common.vocabulary import Outcome


@dataclass(frozen=True)
class AppliedDecision:
    candidate_key: str
    outcome: Outcome
    memory_id: str = ""
    superseded_memory_id: str = ""
    review_item_id: str = ""


@dataclass(frozen=True)
class ApplyOutcome:
    event_id: str
    applied: tuple[AppliedDecision, ...]
    already_processed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "applied": [
                {
                    "candidate_key": a.candidate_key,
                    "outcome": a.outcome.value,
                    "memory_id": a.memory_id,
                    "superseded_memory_id": a.superseded_memory_id,
                    "review_item_id": a.review_item_id,
                }
                for a in self.applied
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], *, already_processed: bool) -> ApplyOutcome:
        applied = tuple(
            AppliedDecision(
                candidate_key=str(a["candidate_key"]),
                outcome=Outcome(a["outcome"]),
                memory_id=str(a.get("memory_id", "")),
                superseded_memory_id=str(a.get("superseded_memory_id", "")),
                review_item_id=str(a.get("review_item_id", "")),
            )
            for a in data.get("applied", [])
        )
        return cls(event_id=str(data["event_id"]), applied=applied, already_processed=already_processed)


def tombstone_outcome(event_id: str, deletion_id: str) -> dict[str, Any]:
    """The outcome recorded for a forgotten event memory never applied: a later delivery of it is a
    repeat that writes nothing, so a forgotten event cannot be learned after the fact."""
    return {"event_id": event_id, "applied": [], "forgotten_by": deletion_id}
