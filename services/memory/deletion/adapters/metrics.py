"""The deletion ledger's backlog as Prometheus gauges, so "a forget is stuck" pages someone.

A deletion is acknowledged at once and its remaining steps (vectors, derived records, streams,
content blobs, each replica's index) run afterwards; a step that stays open means some copy of
forgotten data still exists somewhere. Every memory replica reads the same ledger after each
deletion pass and exports the same figures, so alerts take `max` over replicas. Replica steps are
grouped under `replica` (one label per replica id would grow without bound as pods come and go).
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import Gauge
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.common.db import ALL_TENANTS, set_tenant

OPEN_STEPS = Gauge(
    "memloop_deletion_open_steps",
    "Deletion steps not yet done, by location (replica steps grouped) and state (pending or failed)",
    ["location", "state"],
)
OLDEST_OPEN_AGE = Gauge(
    "memloop_deletion_oldest_open_step_age_seconds",
    "Time since the oldest deletion with a step still open at this location was acknowledged",
    ["location"],
)

_OPEN = text(
    """
    SELECT CASE WHEN s.location LIKE 'replica:%' THEN 'replica' ELSE s.location END AS location,
           s.state, count(*) AS steps,
           EXTRACT(EPOCH FROM now() - min(d.created_at)) AS oldest_age
    FROM deletion_steps s JOIN deletions d ON d.deletion_id = s.deletion_id
    WHERE s.state <> 'done'
    GROUP BY 1, 2
    """
)


@dataclass(frozen=True)
class OpenSteps:
    location: str
    state: str
    steps: int
    oldest_age_seconds: float


class DeletionBacklog:
    """Reads the open steps across tenants (maintenance scope) and publishes them as gauges."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions
        self._published: set[tuple[str, str]] = set()

    def read(self) -> list[OpenSteps]:
        with self._sessions() as session, session.begin():
            set_tenant(session, ALL_TENANTS)
            rows = session.execute(_OPEN).all()
        return [OpenSteps(str(r.location), str(r.state), int(r.steps), float(r.oldest_age)) for r in rows]

    def publish(self) -> list[OpenSteps]:
        """Set the gauges to the ledger's figures; a location that emptied drops back to zero."""
        figures = self.read()
        current = {(f.location, f.state) for f in figures}
        for location, state in self._published - current:
            OPEN_STEPS.labels(location, state).set(0)
        oldest: dict[str, float] = {}
        for figure in figures:
            OPEN_STEPS.labels(figure.location, figure.state).set(figure.steps)
            oldest[figure.location] = max(oldest.get(figure.location, 0.0), figure.oldest_age_seconds)
        for location in {loc for loc, _ in self._published | current}:
            OLDEST_OPEN_AGE.labels(location).set(oldest.get(location, 0.0))
        self._published |= current
        return figures
