"""A small sampling profiler for a whole service process: `python -m bench._sampler` runs a service's
`main` module with a thread that samples every Python thread's stack and keeps the counts in a file.

Why not cProfile: it sees one thread (the gRPC servicers run in a pool), and its per-call cost
distorts exactly the short calls a serving path is made of. Why not py-spy or pyinstrument: a new
dependency for one figure. Every `interval` seconds this records, per Python thread, its stack and
whether that thread is running or runnable at that instant (its state in /proc, as py-spy decides
idleness), so the output separates *on-CPU* time from *waiting* (on a lock, the GIL, the database,
a peer). Threads that are not Python threads (gRPC's C core, torch's OpenMP pool) are not sampled;
the Python frame that called into them is.

Sampling starts when `<out>.start` exists (`arm()`), so start-up and warm-up are not in the profile.

Environment: MEMLOOP_BENCH_PROFILE_TARGET (the module to run, e.g. services.serving.entrypoints.main),
MEMLOOP_BENCH_PROFILE_OUT (JSON, rewritten every second and at exit), MEMLOOP_BENCH_PROFILE_INTERVAL (default 0.01 s).
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

_REPO = f"{Path(__file__).resolve().parents[1]}/"
_STDLIB = f"/lib/python{sys.version_info.major}.{sys.version_info.minor}/"
_NOT_WORK = ("entrypoints/main.py:", "services/common/app.py:", "bench/_sampler.py:")


def _working(stack: list[str]) -> bool:
    """A thread is handling something when a memloop frame other than the process's main is on its stack."""
    return any(key.startswith("services/") and not any(m in key for m in _NOT_WORK) for key in stack)


def _running(native_id: int) -> bool:
    """Whether the thread is running or runnable right now (state R in /proc), as py-spy decides idleness."""
    try:
        stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] == "R"


def _frame_key(frame: FrameType) -> str:
    path = frame.f_code.co_filename
    for marker in ("/site-packages/", _REPO, _STDLIB):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{frame.f_code.co_name}"


def _stack(frame: FrameType | None, limit: int = 60) -> list[str]:
    keys: list[str] = []
    while frame is not None and len(keys) < limit:
        keys.append(_frame_key(frame))
        frame = frame.f_back
    return keys


class Sampler:
    """Samples every Python thread but itself.

    `busy_*` count thread-samples that were running or runnable; `wall_total` counts
    thread-samples of threads handling work (a memloop frame on the stack), on CPU or waiting.
    """

    def __init__(self, interval: float, out: Path, target: str) -> None:
        self.interval = interval
        self.out = out
        self.target = target
        self._started = time.perf_counter()
        self._armed = False
        self.samples = 0
        self.busy_self: Counter[str] = Counter()
        self.busy_total: Counter[str] = Counter()
        self.wall_total: Counter[str] = Counter()
        self.wall_self: Counter[str] = Counter()
        self.busy_samples = 0
        self.wall_samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        me = threading.get_ident()
        next_dump = time.monotonic() + 1.0
        while not self._stop.wait(self.interval):
            if not self._armed:
                self._armed = self.out.with_suffix(".start").exists()
                self._started = time.perf_counter()
                continue
            if time.monotonic() >= next_dump:  # a process killed before its exit still leaves its samples
                self.dump()
                next_dump = time.monotonic() + 1.0
            natives = {t.ident: t.native_id for t in threading.enumerate()}
            self.samples += 1
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack = _stack(frame)
                if not stack:
                    continue
                native = natives.get(ident)
                busy = native is not None and _running(native)
                unique = set(stack)
                if _working(stack):
                    self.wall_samples += 1
                    self.wall_self[stack[0]] += 1
                    self.wall_total.update(unique)
                if busy:
                    self.busy_samples += 1
                    self.busy_self[stack[0]] += 1
                    self.busy_total.update(unique)

    def dump(self) -> None:
        partial = self.out.with_suffix(".tmp")
        partial.write_text(json.dumps(self.report()))
        partial.replace(self.out)

    def report(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "seconds": time.perf_counter() - self._started,
            "interval": self.interval,
            "samples": self.samples,
            "busy_samples": self.busy_samples,
            "wall_samples": self.wall_samples,
            "busy_self": self.busy_self.most_common(40),
            "busy_total": self.busy_total.most_common(60),
            "wall_total": self.wall_total.most_common(60),
            "wall_self": self.wall_self.most_common(40),
        }


def main() -> None:
    target = os.environ["MEMLOOP_BENCH_PROFILE_TARGET"]
    out = Path(os.environ["MEMLOOP_BENCH_PROFILE_OUT"])
    sampler = Sampler(float(os.environ.get("MEMLOOP_BENCH_PROFILE_INTERVAL", "0.01")), out, target)
    sampler.start()
    try:
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    finally:
        sampler.stop()
        sampler.dump()


def arm(out: Path) -> None:
    """Start sampling in the process writing to `out` (from now on)."""
    out.with_suffix(".start").touch()


def summarise(report: dict[str, Any], *, top: int = 12, view: str = "busy", contains: str = "") -> list[str]:
    """Readable lines: the functions with the largest share of running (`busy`) or working (`wall`)
    thread-samples, inclusive (a function and everything it called; `contains` filters these), then
    the innermost frames."""
    total = max(1, int(report[f"{view}_samples"]))
    what = "running or runnable" if view == "busy" else "handling work (running or waiting)"
    lines = [
        f"{report['target']}: {report['samples']} samples every {report['interval'] * 1000:g} ms over "
        f"{report['seconds']:.0f} s; {total} thread-samples {what}, inclusive shares:"
    ]
    shown = 0
    for key, count in report[f"{view}_total"]:
        if contains and contains not in key:
            continue
        lines.append(f"  {100 * count / total:5.1f}%  {key}")
        shown += 1
        if shown >= top:
            break
    lines.append("  innermost Python frame (where the time is spent):")
    lines += [f"  {100 * count / total:5.1f}%  {key}" for key, count in report[f"{view}_self"][:top]]
    return lines


if __name__ == "__main__":
    main()
