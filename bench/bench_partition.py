"""One large user's partition in-process: where a search's time goes, and what the knobs trade.

Not a test: prints figures. Builds memory's codes partition (`faiss_partition.Partition`) over the
bench_search large user's kind of vectors (hashing embedder, bench_search's texts; 1e5 by default)
and times single bench-like queries (k = 40, what SearchMemories asks for k = 10) stage by stage in
this thread's CPU time (`time.thread_time_ns`: the machine is shared, CPU is steadier than wall):
the gate's look at the coarse quantizer, the codes' scan, the float gather with the exact re-rank,
and the whole `Partition.search`. recall@10 is tie-aware against numpy exact, as bench_search's.

Variants are measured interleaved, query by query, on the same queries: the partition as built
(also with OpenMP bound to this thread when more are allowed), then the same codes with other
re-rank counts (at least 4 x 40 = 160 whatever is asked) or nprobes (`--rerank`, `--nprobe`), and
a rebuild with another list count (`--nlist-factor`). The other threads' CPU during each search
and the process's thread count show whether a single query starts OpenMP threads; recall is
computed after the timed calls, and the bench is meant to run with OPENBLAS_NUM_THREADS=1: numpy's
exact product over 1e5 rows wakes OpenBLAS's threads, which spin on after it (1.95 ms of other
threads' CPU per search was theirs, not faiss's, when recall ran between the calls).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m bench.bench_partition [--n 100000] [--queries 400] [--rerank 64 128] \
        [--nprobe 96 128] [--nlist-factor 4]
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable
from typing import Any

import faiss
import numpy as np

from bench._harness import load_average
from bench.bench_search import EMBEDDER, K, _numpy_exact, _text
from services.common.vocabulary import MemoryType
from services.memory.core.adapters import faiss_partition, faiss_quantised
from services.memory.core.adapters.faiss_partition import Partition

FETCH = 40
TYPES = list(MemoryType)[:3]


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _cpu_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.thread_time_ns()
    out = fn()
    return (time.thread_time_ns() - started) / 1e6, out


def _recall(vectors: np.ndarray, query: np.ndarray, returned: list[int]) -> int:
    truth = _numpy_exact(vectors, query)
    scores = vectors @ query
    tenth = float(scores[truth[-1]]) - 1e-5
    return sum(1 for i in returned if scores[i] >= tenth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rerank", type=int, nargs="*", default=[])
    parser.add_argument("--nprobe", type=int, nargs="*", default=[])
    parser.add_argument("--nlist-factor", type=float, nargs="*", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    vectors = EMBEDDER.embed([_text(rng) for _ in range(args.n)]).astype(np.float32)
    ids = np.arange(args.n, dtype=np.int64)
    started = time.perf_counter()
    partition = Partition.empty(vectors.shape[1])
    partition.add(ids, vectors, [TYPES[i % 3] for i in range(args.n)])
    partition.rebuild()
    assert partition.probes is not None
    ivf = faiss.extract_index_ivf(partition.index)
    print(
        f"n {args.n:,}: built in {time.perf_counter() - started:.1f} s, nlist {ivf.nlist}, probes {partition.probes};"
        f" omp max threads {faiss.omp_get_max_threads()}; load {load_average()}",
        flush=True,
    )
    qrng = np.random.default_rng(5)
    queries = EMBEDDER.embed([f"{_text(qrng)} q{i}" for i in range(args.queries)], kind="query").astype(np.float32)
    narrow = partition.probes.narrow

    def staged(q: np.ndarray, nprobe: int, rerank: int) -> tuple[dict[str, float], list[int]]:
        row = q.reshape(1, -1)
        t_gate, _ = _cpu_ms(lambda: ivf.quantizer.search(row, 1))
        params = faiss.SearchParametersIVF()
        params.nprobe = nprobe
        wanted = max(rerank, 4 * FETCH)
        t_scan, (_, found) = _cpu_ms(lambda: partition.index.search(row, wanted, params=params))
        assert partition.floats is not None
        floats = partition.floats

        def rerank_exact() -> list[int]:
            cands = found[0][found[0] >= 0]
            exact = floats.get(cands.tolist()) @ q
            return [int(i) for i in cands[np.argsort(-exact, kind="stable")[:FETCH]]]

        t_rerank, top = _cpu_ms(rerank_exact)
        return {"gate": t_gate, "scan": t_scan, "re-rank": t_rerank}, top

    variants: dict[str, Callable[[np.ndarray], tuple[dict[str, float], list[int]]]] = {}
    types: frozenset[MemoryType] = frozenset()

    def whole(q: np.ndarray) -> tuple[dict[str, float], list[int]]:
        process_ns, wall_ns = time.process_time_ns(), time.perf_counter_ns()
        t, hits = _cpu_ms(lambda: partition.search(q.reshape(1, -1), FETCH, types))
        process = (time.process_time_ns() - process_ns) / 1e6
        wall = (time.perf_counter_ns() - wall_ns) / 1e6
        return {"whole": t, "(other threads' CPU)": process - t, "(wall)": wall}, [i for i, _ in hits]

    variants["Partition.search as built"] = whole

    def one_thread(q: np.ndarray) -> tuple[dict[str, float], list[int]]:
        saved = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            return whole(q)
        finally:
            faiss.omp_set_num_threads(saved)

    if faiss.omp_get_max_threads() > 1:
        variants["Partition.search, OpenMP 1 thread"] = one_thread
    variants[f"staged nprobe {narrow} rerank {faiss_quantised.RERANK}"] = lambda q: staged(
        q, narrow, faiss_quantised.RERANK
    )
    for r in args.rerank:
        variants[f"staged nprobe {narrow} rerank {r}"] = functools.partial(staged, nprobe=narrow, rerank=r)
    for p in args.nprobe:
        variants[f"staged nprobe {p} rerank {faiss_quantised.RERANK}"] = functools.partial(
            staged, nprobe=p, rerank=faiss_quantised.RERANK
        )
    for factor in args.nlist_factor:
        started = time.perf_counter()
        other = Partition.empty(vectors.shape[1])
        other.add(ids, vectors, [TYPES[i % 3] for i in range(args.n)])
        saved = faiss_partition.NLIST_FACTOR
        faiss_partition.NLIST_FACTOR = factor
        try:
            other.rebuild()
        finally:
            faiss_partition.NLIST_FACTOR = saved
        print(
            f"nlist factor {factor}: built in {time.perf_counter() - started:.1f} s,"
            f" nlist {faiss.extract_index_ivf(other.index).nlist}, probes {other.probes}",
            flush=True,
        )

        def whole_other(q: np.ndarray, other: Partition = other) -> tuple[dict[str, float], list[int]]:
            t, hits = _cpu_ms(lambda: other.search(q.reshape(1, -1), FETCH, types))
            return {"whole": t}, [i for i, _ in hits]

        variants[f"Partition.search, nlist factor {factor}"] = whole_other
    times: dict[str, dict[str, list[float]]] = {name: {} for name in variants}
    found: dict[str, int] = dict.fromkeys(variants, 0)
    threads_before = _threads()
    answers: dict[str, list[list[int]]] = {name: [] for name in variants}
    for q in queries:
        for name, fn in variants.items():
            stages, top = fn(q)
            for stage, ms in stages.items():
                times[name].setdefault(stage, []).append(ms)
            answers[name].append(top[:K])
    for name in variants:  # after the timed calls: numpy's BLAS threads spin on after a product
        found[name] = sum(_recall(vectors, q, top) for q, top in zip(queries, answers[name], strict=True))
    print(f"threads before {threads_before}, after {_threads()}; load {load_average()}")
    for name in variants:
        cells = []
        for stage, values in times[name].items():
            cells.append(f"{stage} p50 {np.percentile(values, 50):.3f} / p99 {np.percentile(values, 99):.3f}")
        total = np.sum([v for s, v in times[name].items() if not s.startswith("(")], axis=0)
        print(
            f"  {name:<42} CPU ms: total p50 {np.percentile(total, 50):.3f} / p99 {np.percentile(total, 99):.3f};"
            f" {'; '.join(cells)}; recall@10 {found[name] / (K * len(queries)):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
