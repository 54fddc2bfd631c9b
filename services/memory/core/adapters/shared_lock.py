"""A lock that many searches hold at once and one writer holds alone.

The index answers every user's retrieval from one process. With a plain lock, one search of a
large partition (milliseconds of FAISS scanning, with the GIL released) kept every other user's
search waiting behind it; searches only read, so they may share. Writers (the change feed's
apply, a rebuild's install, a load or reset) still exclude everyone. A waiting writer stops new
readers from entering, so a steady stream of searches cannot starve the index's catch-up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SharedLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()
