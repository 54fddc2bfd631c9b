"""A small LRU of index hits in front of retrieval, dropped per (tenant, user) on every write.

A search reads the (tenant, user)'s stamp before it searches the index and offers its hits with
that stamp: if the user was invalidated meanwhile (the change feed applied a write between the
index search and the put), the hits describe an index state that is gone and are not kept.
Without that, a search racing a catch-up could cache a result missing a new memory, and every
repeat of the query would keep missing it until the user's next write.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

_Owner = tuple[str, str]


class LruRetrievalCache:
    """Holds (row id, score) lists only: results are always re-confirmed against the database."""

    def __init__(self, capacity: int = 512, stamps: int = 16_384) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[tuple[Any, ...], tuple[_Owner, list[tuple[int, float]]]] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = 0
        self._stamps: OrderedDict[_Owner, int] = OrderedDict()
        self._stamp_capacity = max(1, stamps)
        self._floor = 0
        """The newest stamp forgotten from `_stamps`: users without their own stamp get it, so a
        forgotten stamp can only make a put be refused, never let a stale one through."""

    def get(self, key: tuple[Any, ...]) -> list[tuple[int, float]] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return list(entry[1])

    def stamp(self, tenant: str, user: str) -> int:
        """The user's invalidation stamp now; read it before searching the index."""
        with self._lock:
            return self._stamps.get((tenant, user), self._floor)

    def put(
        self, key: tuple[Any, ...], tenant: str, user: str, hits: list[tuple[int, float]], *, stamp: int | None = None
    ) -> None:
        """Keep `hits` unless the user was invalidated since `stamp` was read (then they are stale)."""
        if self._capacity <= 0:
            return
        with self._lock:
            if stamp is not None and self._stamps.get((tenant, user), self._floor) != stamp:
                return
            self._entries[key] = ((tenant, user), list(hits))
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def invalidate(self, tenant: str, user: str) -> None:
        with self._lock:
            self._counter += 1
            self._stamps[(tenant, user)] = self._counter
            self._stamps.move_to_end((tenant, user))
            while len(self._stamps) > self._stamp_capacity:
                _, forgotten = self._stamps.popitem(last=False)
                self._floor = max(self._floor, forgotten)
            for key in [k for k, (owner, _) in self._entries.items() if owner == (tenant, user)]:
                del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
