"""`keep_freed_heap`: a freed block stays with the process instead of going back to the kernel
inside the `free()` (where a request thread paid for it), measured by the process's own RSS."""

from __future__ import annotations

import subprocess
import sys

import pytest

_CHILD = """
import sys
from services.common.heap import keep_freed_heap

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

if sys.argv[1] == "kept":
    assert keep_freed_heap()
block = bytearray(20 * 2**20)  # touched: bytearray zero-fills it
held = rss_mib()
del block
print(held - rss_mib())
"""


def _returned_mib(mode: str) -> float:
    done = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True)
    return float(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and /proc")
def test_a_freed_block_stays_with_the_process_once_the_heap_is_kept() -> None:
    # Given glibc's defaults, a freed 20 MiB block is unmapped in its free
    assert _returned_mib("default") > 15
    # When the thresholds are fixed, the same block is kept for reuse
    assert _returned_mib("kept") < 1
