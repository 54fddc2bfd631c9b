"""glibc malloc's heap trimming kept out of request threads.

glibc returns the free top of a heap to the kernel (`madvise(MADV_DONTNEED)`, or `sbrk` for the
main arena) from inside whichever `free()` finds it past the trim threshold, and its dynamic
threshold rises with the largest block freed: after a large free (an index load's arrays) it
settles at 64 MiB. A process that loads or builds large things on one thread and serves on others
then pays a trim of tens of MiB inside some request: memory's SearchMemories spent 20-92 ms in the
kernel (`madvise` → `unmap_page_range`, perf) in one call of each bench run, the large user's 10th,
in its protobuf mapping's frees; that one call was a 100-call round's p99.

`keep_freed_heap` fixes both thresholds instead: blocks under 32 MiB come from the heap (no
`mmap`/`munmap` and page faults per search for the re-rank's and faiss's buffers), and a heap's
free top is kept for reuse rather than trimmed in a request. The price is resident memory: the
process keeps its peak heap (memory's index is resident anyway). glibc only; elsewhere a no-op.
"""

from __future__ import annotations

import ctypes
import logging

_log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
"""glibc's largest allowed mmap threshold on 64-bit, and the value its dynamic one rises to."""
TRIM_THRESHOLD = 2**31 - 1
"""mallopt's largest (an int), 2 GiB: a free never trims a heap in practice."""


def keep_freed_heap() -> bool:
    """Fix glibc's mmap and trim thresholds for this process (all threads, from now on); False
    where there is no glibc `mallopt` or it refused."""
    try:
        mallopt = ctypes.CDLL("libc.so.6", use_errno=True).mallopt
    except (OSError, AttributeError):
        _log.info("no glibc mallopt here; heap trimming left as the allocator does it")
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    fixed = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    fixed = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and fixed
    if not fixed:
        _log.warning("glibc refused the malloc thresholds; heap trimming left as the allocator does it")
    return fixed
