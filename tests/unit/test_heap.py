"""`release_freed_heap`: pages freed inside the heap (below a live block, so `free` cannot give
them back itself) leave the process when it runs, measured by the process's own RSS."""

from __future__ import annotations

import subprocess
import sys

import pytest

_CHILD = """
import sys
from services.common.heap import release_freed_heap

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

blocks = [bytearray(64 * 1024) for _ in range(512)]  # 32 MiB from the heap, touched (zero-filled)
sentinel = bytearray(64 * 1024)  # above them: their free space is not the heap's top
del blocks
held = rss_mib()
if sys.argv[1] == "released":
    assert release_freed_heap()
print(held - rss_mib())
"""


def _returned_mib(mode: str) -> float:
    done = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True)
    return float(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc")
def test_freed_heap_pages_leave_the_process_when_released() -> None:
    # Given 32 MiB freed below a live block: glibc's free keeps them
    assert _returned_mib("kept") < 4
    # When they are released, they leave the process
    assert _returned_mib("released") > 24


def test_what_lives_at_freeze_is_never_walked_by_a_full_collection_again() -> None:
    # Given a process holding a million small lists (an index's per-vector entries, say)
    # When it freezes what it holds
    # Then a full collection walks far less than before (the lists are out of its reach)
    child = """
import gc, time
from services.common.heap import freeze_long_lived
held = [[i, "semantic"] for i in range(1_000_000)]
def full_ms():
    start = time.perf_counter(); gc.collect(); return (time.perf_counter() - start) * 1000
before = min(full_ms() for _ in range(3))
freeze_long_lived()
after = min(full_ms() for _ in range(3))
print(before, after, gc.get_freeze_count() >= len(held))
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    before, after, frozen = done.stdout.split()
    assert frozen == "True"
    assert float(after) < float(before) / 5
