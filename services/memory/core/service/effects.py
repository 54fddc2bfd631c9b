"""What follows a commit: this replica's indexes and cache, then notices for peers and reviewers.

Runs only after the transaction committed, so nothing announced can be rolled back; every step
is best-effort and idempotent because the database stays the truth (peers also poll it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from services.memory.core.service.index_sync import IndexSynchroniser
from services.memory.core.service.ports import Notices, RetrievalCache

_log = logging.getLogger(__name__)


class AfterCommit:
    def __init__(self, sync: IndexSynchroniser, cache: RetrievalCache, notices: Notices) -> None:
        self._sync = sync
        self._cache = cache
        self._notices = notices

    def memories_changed(self, tenant: str, users: Iterable[str], memory_ids: Sequence[str]) -> None:
        """Refresh local indexes (read-your-writes on this replica), drop cached results, tell peers."""
        for user in set(users):
            self._cache.invalidate(tenant, user)
        try:
            self._sync.catch_up()
        except Exception:
            _log.exception("index catch-up after commit failed; the periodic poll will retry")
        if memory_ids:
            self._notices.memory_changed(tenant, memory_ids, self._sync.watermark)

    def review_created(self, tenant: str, user: str, review_item_id: str, event_id: str) -> None:
        self._notices.review_created(tenant, user, review_item_id, event_id)
