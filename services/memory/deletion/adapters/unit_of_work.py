"""The memory unit of work with the deletion ledger and scrubber on the same transaction.

A subclass rather than new attributes on the memory unit of work, so the learning paths keep
their narrower type and only the deletion use cases see the ledger (as consolidation does).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from services.memory.core.adapters.unit_of_work import SqlMemoryUnitOfWork
from services.memory.deletion.adapters.ledger import SqlDeletionLedger
from services.memory.deletion.adapters.scrub import SqlDeletionScrubber


class SqlDeletionUnitOfWork(SqlMemoryUnitOfWork):
    deletions: SqlDeletionLedger
    scrub: SqlDeletionScrubber

    def __enter__(self) -> SqlDeletionUnitOfWork:
        super().__enter__()
        return self

    def _open(self, session: Session) -> None:
        super()._open(session)
        self.deletions = SqlDeletionLedger(self._db)
        self.scrub = SqlDeletionScrubber(self._db)
