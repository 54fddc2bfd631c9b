"""A small LRU of index hits in front of retrieval, dropped per (tenant, user) on every write."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class LruRetrievalCache:
    """Holds (row id, score) lists only: results are always re-confirmed against the database."""

    def __init__(self, capacity: int = 512) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[tuple[Any, ...], tuple[tuple[str, str], list[tuple[int, float]]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> list[tuple[int, float]] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return list(entry[1])

    def put(self, key: tuple[Any, ...], tenant: str, user: str, hits: list[tuple[int, float]]) -> None:
        if self._capacity <= 0:
            return
        with self._lock:
            self._entries[key] = ((tenant, user), list(hits))
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def invalidate(self, tenant: str, user: str) -> None:
        with self._lock:
            for key in [k for k, (owner, _) in self._entries.items() if owner == (tenant, user)]:
                del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
