"""A stand-in for learning's CPU, for `bench_serving_ab`'s burner variants: at SCHED_IDLE, `duty`
of one core, in bursts of `burst_ms`, doing either pure Python (a small cache footprint, almost
no system calls) or large float32 matrix products (tens of MB touched per burst, as MiniLM's
weights are). If serving's p99 rises beside it as it does beside learning, the cost is the shared
machine (caches, memory bandwidth, the CPU's clock), not learning's scheduling or its I/O.

    python -m bench._burner python|numpy DUTY BURST_MS
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable


def main() -> None:
    kind, duty, burst_ms = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    work = _numpy_work() if kind == "numpy" else _python_work
    burst = burst_ms / 1000.0
    pause = burst * (1.0 - duty) / duty
    print("burning", flush=True)  # the parent waits for this line, not for a guessed time
    while True:
        started = time.perf_counter()
        while time.perf_counter() - started < burst:
            work()
        time.sleep(pause)


def _python_work() -> None:
    total = 0
    for i in range(2000):
        total += i * i


def _numpy_work() -> Callable[[], None]:
    import numpy as np

    weights = np.random.default_rng(0).standard_normal((2048, 2048), dtype=np.float32)  # 16 MB
    inputs = np.random.default_rng(1).standard_normal((64, 2048), dtype=np.float32)

    def work() -> None:
        inputs @ weights

    return work


if __name__ == "__main__":
    main()
