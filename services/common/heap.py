"""The heap's free pages handed back to the kernel at a moment of our choosing.

protobuf's Python extension (upb) frees its message arenas through an allocator that calls glibc's
`malloc_trim(0)` on every 10,000th free, in whichever thread does that free: `madvise` over every
free page of every arena. Right after memory has loaded or built its index, the heap holds the
load's freed temporaries, and that first trim landed inside a search's protobuf mapping: 20-92 ms
of system CPU in the large user's 10th call of every bench run (perf: `PyUpb_Arena_Dealloc` →
`upb_trim_allocfunc` → `__malloc_trim` → `madvise` → `unmap_page_range`), one call that was a
100-call round's p99. `release_freed_heap` runs that trim ourselves, before serving, so upb's
next one finds only what the requests freed since. `freeze_long_lived` does the same for Python's
cycle collector: what the start built is never walked again.
"""

from __future__ import annotations

import ctypes
import gc
import logging

_log = logging.getLogger(__name__)


def release_freed_heap() -> bool:
    """glibc's `malloc_trim(0)` now, in this thread; False where there is no glibc."""
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        _log.debug("no glibc malloc_trim here")
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True


def freeze_long_lived() -> None:
    """Collect once, then move every object alive now out of the collector's reach (`gc.freeze`).

    What a process holds after its start (an index's per-partition maps, the model, the modules) lives
    until it exits, yet every full collection walked it: with a 1e6-vector index that was a 108 ms
    pause, taken in whichever thread allocated the object that tipped the count — a search's, as
    often as not. Frozen, it is never walked again (a full collection took ~3 ms after). Objects
    made later are collected as before; frozen ones that die are simply not freed by the cycle
    collector (their reference counts still free them).
    """
    gc.collect()
    gc.freeze()
