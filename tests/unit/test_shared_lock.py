"""The index's lock: searches share it, a writer holds it alone, and a waiting writer is not
starved by a stream of searches (it stops new ones from entering)."""

from __future__ import annotations

import threading
import time

from services.memory.core.adapters.shared_lock import SharedLock

WAIT = 5.0


def _hold_shared(lock: SharedLock, entered: threading.Event, release: threading.Event) -> threading.Thread:
    def run() -> None:
        with lock.shared():
            entered.set()
            release.wait(WAIT)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _until_waiting(lock: SharedLock, threads: int) -> None:
    """Until `threads` threads are blocked inside the lock (its condition's waiters): observed, not slept on."""
    deadline = time.monotonic() + WAIT
    while len(lock._cond._waiters) < threads:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, f"fewer than {threads} threads ever waited on the lock"
        time.sleep(0.001)


def test_two_searches_hold_the_lock_at_once() -> None:
    lock, release = SharedLock(), threading.Event()
    first, second = threading.Event(), threading.Event()
    threads = [_hold_shared(lock, first, release), _hold_shared(lock, second, release)]
    try:
        assert first.wait(WAIT) and second.wait(WAIT), "the second search waited for the first"
    finally:
        release.set()
        for thread in threads:
            thread.join(WAIT)


def test_a_writer_waits_for_searches_and_new_searches_wait_for_the_writer() -> None:
    lock, release = SharedLock(), threading.Event()
    reading = threading.Event()
    reader = _hold_shared(lock, reading, release)
    assert reading.wait(WAIT)
    order: list[str] = []
    writing = threading.Event()

    def write() -> None:
        with lock.exclusive():
            writing.set()
            order.append("writer")

    def late_search() -> None:
        with lock.shared():
            order.append("late search")

    writer = threading.Thread(target=write)
    writer.start()
    _until_waiting(lock, 1)  # the writer is parked on the lock's condition
    late = threading.Thread(target=late_search)
    late.start()
    _until_waiting(lock, 2)  # and so is the search that came after it
    assert not writing.is_set(), "the writer entered while a search held the lock"
    assert order == [], "a search entered ahead of the waiting writer"
    release.set()
    for thread in (reader, writer, late):
        thread.join(WAIT)
    assert order == ["writer", "late search"]


def test_the_lock_is_free_again_after_an_exception_inside() -> None:
    lock = SharedLock()
    for section in (lock.shared, lock.exclusive):
        try:
            with section():
                raise RuntimeError("boom")
        except RuntimeError:
            pass
    done = threading.Event()

    def write() -> None:
        with lock.exclusive():
            done.set()

    threading.Thread(target=write).start()
    assert done.wait(WAIT)
