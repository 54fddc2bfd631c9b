"""What a deletion removes or scrubs in memory's database besides the memory rows themselves.

Each method is one statement (or a read), idempotent, tenant-named on top of row-level security.
Scrubbing blanks text in place rather than deleting rows, so ids, lineage and the audit trail
that point at those rows stay valid: a scrubbed candidate still says which event proposed what
kind of memory and what policy decided, a deleted review item still says who reviewed it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text

from services.memory.core.adapters.repositories.base import Db

_SCRUB_CANDIDATES = text(
    """
    UPDATE candidates c SET text = '', candidate_key = '',
        reason_messages = (SELECT coalesce(jsonb_agg(to_jsonb(''::text)), '[]'::jsonb)
                           FROM jsonb_array_elements(c.reason_messages))
    FROM deletion_items i
    WHERE i.deletion_id = :deletion_id AND i.kind = 'candidate' AND i.tenant = :tenant
      AND c.candidate_id = i.item_id AND c.tenant = :tenant
      AND (c.text <> '' OR c.candidate_key <> ''
           OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(c.reason_messages) m WHERE m <> ''))
    """
)

_DELETE_VECTORS = text(
    """
    DELETE FROM memory_vectors v USING deletion_items i
    WHERE i.deletion_id = :deletion_id AND i.kind = 'memory' AND i.tenant = :tenant
      AND v.memory_id = i.item_id AND v.tenant = :tenant
    """
)

_REVIEW_ITEMS_OF = text(
    """
    SELECT review_item_id FROM review_items
    WHERE tenant = :tenant AND (
        candidate_id IN (SELECT item_id FROM deletion_items
                         WHERE deletion_id = :deletion_id AND kind = 'candidate' AND tenant = :tenant)
        OR event_id IN (SELECT item_id FROM deletion_items
                        WHERE deletion_id = :deletion_id AND kind = 'event' AND tenant = :tenant))
    """
)

_PROCEDURES_OF = text(
    """
    SELECT id::text AS id FROM learned_procedures
    WHERE tenant = :tenant AND (
        details ->> 'review_item_id' = ANY(:review_item_ids)
        OR details ->> 'event_id' IN (SELECT item_id FROM deletion_items
                                      WHERE deletion_id = :deletion_id AND kind = 'event' AND tenant = :tenant)
        OR (:user <> '' AND details ->> 'user' = :user))
    ORDER BY row_id
    """
)

_DELETED_MEMORY = """(CAST(:all_memories AS boolean) OR {entry} ->> 'memory_id' IN (
    SELECT item_id FROM deletion_items WHERE deletion_id = :deletion_id AND kind = 'memory' AND tenant = :tenant))"""

_SCRUB_OUTCOMES = text(
    f"""
    UPDATE processed_events p
    SET outcome = jsonb_set(p.outcome, '{{applied}}', (
        SELECT coalesce(jsonb_agg(CASE WHEN {_DELETED_MEMORY.format(entry="a.entry")}
                                       THEN a.entry || jsonb_build_object('candidate_key', '')
                                       ELSE a.entry END ORDER BY a.position), '[]'::jsonb)
        FROM jsonb_array_elements(p.outcome -> 'applied') WITH ORDINALITY AS a(entry, position)))
    WHERE p.tenant = :tenant
      AND p.event_id IN (
          SELECT item_id FROM deletion_items WHERE deletion_id = :deletion_id AND kind = 'event' AND tenant = :tenant
          UNION
          SELECT c.event_id FROM candidates c
          JOIN deletion_items i ON i.item_id = c.candidate_id AND i.deletion_id = :deletion_id
                               AND i.kind = 'candidate' AND i.tenant = :tenant
          WHERE c.tenant = :tenant)
      AND jsonb_typeof(p.outcome -> 'applied') = 'array'
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(p.outcome -> 'applied') AS e(entry)
                  WHERE coalesce(e.entry ->> 'candidate_key', '') <> ''
                    AND {_DELETED_MEMORY.format(entry="e.entry")})
    """
)


class SqlDeletionScrubber:
    def __init__(self, db: Db) -> None:
        self._db = db
        self._tenant = db.tenant

    def delete_vectors(self, deletion_id: str) -> int:
        return self._count(_DELETE_VECTORS, deletion_id=deletion_id)

    def unlink_sources(self, event_id: str, memory_ids: Sequence[str]) -> list[str]:
        """Drop the event's provenance rows from `memory_ids` (memories it shares with other events)."""
        if not memory_ids:
            return []
        rows = self._db.execute(
            text(
                "DELETE FROM memory_sources WHERE tenant = :tenant AND event_id = :event_id"
                " AND memory_id = ANY(:ids) RETURNING memory_id"
            ),
            {"tenant": self._tenant, "event_id": event_id, "ids": list(memory_ids)},
        ).all()
        return sorted(str(r.memory_id) for r in rows)

    def shared_memories(self, event_id: str, deleted: Sequence[str]) -> list[str]:
        """Memories the event is a source of that the deletion did not delete."""
        rows = self._db.execute(
            text(
                "SELECT memory_id FROM memory_sources WHERE tenant = :tenant AND event_id = :event_id"
                " AND NOT (memory_id = ANY(:deleted))"
            ),
            {"tenant": self._tenant, "event_id": event_id, "deleted": list(deleted)},
        ).all()
        return sorted(str(r.memory_id) for r in rows)

    def scrub_candidates(self, deletion_id: str) -> int:
        return self._count(_SCRUB_CANDIDATES, deletion_id=deletion_id)

    def review_items_of(self, deletion_id: str) -> list[str]:
        rows = self._db.execute(_REVIEW_ITEMS_OF, {"tenant": self._tenant, "deletion_id": deletion_id}).all()
        return sorted(str(r.review_item_id) for r in rows)

    def delete_review_items(self, review_item_ids: Sequence[str]) -> list[str]:
        """State `deleted`, the reviewer's reason blanked; returns only the items this call changed."""
        if not review_item_ids:
            return []
        rows = self._db.execute(
            text(
                "UPDATE review_items SET state = 'deleted', resolution_reason = ''"
                " WHERE tenant = :tenant AND review_item_id = ANY(:ids)"
                " AND (state <> 'deleted' OR resolution_reason <> '') RETURNING review_item_id"
            ),
            {"tenant": self._tenant, "ids": list(review_item_ids)},
        ).all()
        return sorted(str(r.review_item_id) for r in rows)

    def scrub_outcomes(self, deletion_id: str, *, only_deleted_memories: bool) -> int:
        """Blank the candidate keys in the processed outcomes of the deletion's events and of its
        candidates' events (a key hashes the text's meaning, so it can confirm a guess): every
        decision's, or with `only_deleted_memories` only those that wrote one of its memories.
        One UPDATE, touching only outcomes that still hold such a key (a repeat changes nothing)."""
        return self._count(_SCRUB_OUTCOMES, deletion_id=deletion_id, all_memories=not only_deleted_memories)

    def tombstone(self, event_id: str, user: str, outcome: dict[str, Any]) -> bool:
        return self.tombstone_many([(event_id, user, outcome)]) == 1

    def tombstone_many(self, events: Sequence[tuple[str, str, dict[str, Any]]]) -> int:
        """`tombstone` for many events as one INSERT; returns how many were recorded by this call."""
        if not events:
            return 0
        rows = self._db.execute(
            text(
                "INSERT INTO processed_events (tenant, event_id, user_id, outcome)"
                " SELECT :tenant, t.event_id, t.user_id, CAST(t.outcome AS jsonb)"
                " FROM unnest(CAST(:ids AS text[]), CAST(:users AS text[]), CAST(:outcomes AS text[]))"
                " AS t(event_id, user_id, outcome)"
                " ON CONFLICT DO NOTHING RETURNING event_id"
            ),
            {
                "tenant": self._tenant,
                "ids": [e for e, _, _ in events],
                "users": [u for _, u, _ in events],
                "outcomes": [json.dumps(o) for _, _, o in events],
            },
        ).all()
        return len(rows)

    def delete_notes(self, deletion_id: str, *, review_item_ids: Sequence[str], procedure_ids: Sequence[str]) -> int:
        """Reviewers' and operators' free-text reasons about what the deletion removes."""
        return self._count(
            text(
                "DELETE FROM operator_notes o WHERE o.tenant = :tenant AND ("
                " o.memory_id IN (SELECT item_id FROM deletion_items"
                "                 WHERE deletion_id = :deletion_id AND kind = 'memory' AND tenant = :tenant)"
                " OR o.review_item_id = ANY(:reviews) OR o.procedure_id = ANY(:procedures))"
            ),
            deletion_id=deletion_id,
            reviews=list(review_item_ids),
            procedures=list(procedure_ids),
        )

    def procedures_of(self, deletion_id: str, *, review_item_ids: Sequence[str], user: str) -> list[str]:
        rows = self._db.execute(
            _PROCEDURES_OF,
            {
                "tenant": self._tenant,
                "deletion_id": deletion_id,
                "review_item_ids": list(review_item_ids),
                "user": user,
            },
        ).all()
        return [str(r.id) for r in rows]

    def forget_procedure(self, procedure_id: str, deletion_id: str) -> bool:
        """Through m0004's `forget_learned_procedure`: the app role's only write to procedure content."""
        row = self._db.execute(
            text("SELECT forget_learned_procedure(CAST(:id AS uuid), :deletion_id) AS changed"),
            {"id": procedure_id, "deletion_id": deletion_id},
        ).one()
        return bool(row.changed)

    def _count(self, statement: Any, **params: Any) -> int:
        result = self._db.execute(statement, {"tenant": self._tenant, **params})
        return int(result.rowcount)  # type: ignore[attr-defined]
