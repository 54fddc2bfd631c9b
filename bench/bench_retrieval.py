"""Retrieval: recall@10 and single-query latency of approximate indexes against exact search.

Not a test: prints figures. One run on this machine measures, at each size:

- exact search in numpy (one matrix-vector product and a partial sort): the ground truth and the
  latency baseline;
- FAISS `IndexIVFFlat` (nlist ≈ 2·√n, trained on a 39·nlist sample; `nprobe` swept upwards and
  the smallest meeting recall@10 ≥ 0.95 reported, single-threaded per query). IVF is the
  approximate index that still supports `remove_ids` (with a hashtable direct map), which
  memory's supersession and deletion need;
- FAISS `IndexIDMap2(IndexFlatIP)`, the exact index the memory service serves per tenant today,
  for context (recall is 1 by construction);
- pgvector HNSW (`vector_ip_ops`, m=16, ef_construction=64, `ef_search` swept) on the embedded
  PostgreSQL, which ships the `vector` extension; at 1e6 its build is only attempted when the
  1e5 build rate projects it under the time budget, and the output says so when skipped.

Data: 384-dimensional L2-normalised vectors on "bridges" between 4,096 random centres (see
`_data`); uniform random vectors would be the adversarial case where IVF needs far more probes.
Queries are fresh draws from the same mixture; recall uses 1,000 queries (pgvector: 100), p50/p99
come from 1,000 single queries (exact and Flat: 50). Build time and memory are reported too.

    .venv/bin/python bench/bench_retrieval.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import struct
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import psycopg

from services.common.infra.postgres import EmbeddedPostgres, create_database

DIM = 384
CENTRES = 4096
K = 10
RECALL_GOAL = 0.95
SPEEDUP_GOAL = 50.0
QUERIES = 1000
LATENCY_QUERIES = 1000
EXACT_LATENCY_QUERIES = 50
PGVECTOR_BUDGET_SECONDS = 150.0

Matrix = np.ndarray[Any, np.dtype[np.float32]]


@dataclass
class Measured:
    name: str
    recall: float
    p50_ms: float
    p99_ms: float
    build_s: float
    memory_mb: float
    setting: str = ""


def _data(n: int, queries: int, seed: int = 7) -> tuple[Matrix, Matrix]:
    """Points between pairs of 4,096 random centres (c_i + u·c_j + noise), normalised.

    Plain Gaussian clusters line up with IVF's lists and flatter it (recall ≈ 0.98 at nprobe=1);
    drawing each point on a "bridge" between two centres makes neighbourhoods straddle lists, as
    topics do in real sentence embeddings, so the sweep below has to earn its recall.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CENTRES, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def draw(count: int) -> Matrix:
        out = np.empty((count, DIM), dtype=np.float32)
        for start in range(0, count, 100_000):
            size = min(count, start + 100_000) - start
            first, second = rng.integers(0, CENTRES, size), rng.integers(0, CENTRES, size)
            mix = rng.uniform(0.0, 1.0, (size, 1)).astype(np.float32)
            noise = rng.standard_normal((size, DIM), dtype=np.float32) * (0.6 / math.sqrt(DIM))
            block = centres[first] + mix * centres[second] + noise
            out[start : start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
        return out

    return draw(n), draw(queries)


def _exact_topk(base: Matrix, queries: Matrix) -> np.ndarray[Any, np.dtype[np.int64]]:
    result = np.empty((len(queries), K), dtype=np.int64)
    for start in range(0, len(queries), 50):
        scores = queries[start : start + 50] @ base.T
        top = np.argpartition(-scores, K, axis=1)[:, :K]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        result[start : start + 50] = np.take_along_axis(top, order, axis=1)
    return result


def _recall(found: np.ndarray[Any, Any], truth: np.ndarray[Any, Any]) -> float:
    return float(np.mean([len(set(f[f >= 0]) & set(t)) / K for f, t in zip(found, truth, strict=True)]))


def _latencies(search: Any, queries: Matrix, count: int) -> tuple[float, float]:
    for query in queries[-5:]:  # warm caches and thread pools before timing
        search(query)
    times = []
    for query in queries[:count]:
        started = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), float(np.percentile(times, 99))


def _numpy_exact(base: Matrix, queries: Matrix) -> Measured:
    def search(query: Matrix) -> Any:
        scores = base @ query
        top = np.argpartition(-scores, K)[:K]
        return top[np.argsort(-scores[top])]

    p50, p99 = _latencies(search, queries, EXACT_LATENCY_QUERIES)
    return Measured("numpy exact", 1.0, p50, p99, 0.0, base.nbytes / 2**20)


def _faiss_flat(base: Matrix, queries: Matrix) -> Measured:
    started = time.perf_counter()
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    index.add_with_ids(base, np.arange(len(base), dtype=np.int64))
    build = time.perf_counter() - started
    p50, p99 = _latencies(lambda q: index.search(q.reshape(1, -1), K), queries, EXACT_LATENCY_QUERIES)
    return Measured("FAISS IDMap2(FlatIP) (served today)", 1.0, p50, p99, build, _faiss_mb(index))


def _faiss_ivf(base: Matrix, queries: Matrix, truth: np.ndarray[Any, Any]) -> tuple[Measured, Measured]:
    """The smallest nprobe reaching the recall goal, and (for headroom) eight times as many probes."""
    nlist = 2 ** min(round(math.log2(2 * math.sqrt(len(base)))), int(math.log2(len(base) // 39)))
    started = time.perf_counter()
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(DIM), DIM, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = 10
    sample = base[np.random.default_rng(1).choice(len(base), min(len(base), 39 * nlist), replace=False)]
    index.train(sample)
    index.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]  # cheap remove_ids
    index.add_with_ids(base, np.arange(len(base), dtype=np.int64))
    build = time.perf_counter() - started
    sweep, chosen = [], 0
    for nprobe in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if nprobe > nlist:
            break
        index.nprobe = nprobe
        recall = _recall(index.search(queries, K)[1], truth)
        sweep.append(f"{nprobe}:{recall:.3f}")
        if recall >= RECALL_GOAL and not chosen:
            chosen = nprobe
        if chosen and nprobe >= 8 * chosen:  # keep sweeping a little: show the headroom too
            break
    print(f"  {_size(len(base))} IVFFlat{nlist} recall@10 by nprobe: {' '.join(sweep)}", flush=True)
    index.nprobe = chosen or nprobe
    recall = _recall(index.search(queries, K)[1], truth)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # one request, one core: the serving shape under concurrent load
    try:
        p50, p99 = _latencies(lambda q: index.search(q.reshape(1, -1), K), queries, LATENCY_QUERIES)
        index.nprobe = min(nlist, 8 * index.nprobe)
        safe = _recall(index.search(queries, K)[1], truth)
        safe_p50, safe_p99 = _latencies(lambda q: index.search(q.reshape(1, -1), K), queries, LATENCY_QUERIES)
    finally:
        faiss.omp_set_num_threads(threads)
    name, memory = f"FAISS IVFFlat{nlist}", _faiss_mb(index)
    headroom = Measured(name, safe, safe_p50, safe_p99, build, memory, f"nprobe={index.nprobe}")
    return Measured(name, recall, p50, p99, build, memory, f"nprobe={chosen or nprobe}"), headroom


def _size(n: int) -> str:
    return f"{n:.0e}".replace("+0", "")


def _faiss_mb(index: Any) -> float:
    return float(faiss.serialize_index(index).nbytes) / 2**20


# --- pgvector ------------------------------------------------------------------------------------


@contextmanager
def _postgres() -> Iterator[str]:
    root = Path(tempfile.mkdtemp(prefix="memloop-bench-retrieval-"))
    server = EmbeddedPostgres(root / "pg", durable=False, log_path=root / "postgres.log")
    try:
        server.start()
        url = create_database(server.admin_url, "bench_retrieval")
        yield url.replace("postgresql+psycopg://", "postgresql://")
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def _padded(ids: list[int]) -> list[int]:
    return ids + [-1] * (K - len(ids))


def _copy_binary(rows: Matrix) -> bytes:
    """COPY BINARY stream of (id int4, v vector): pgvector's wire form is dim, 0, then float4 BE."""
    record = np.dtype(
        [
            ("fields", ">i2"),
            ("idlen", ">i4"),
            ("id", ">i4"),
            ("vlen", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("v", ">f4", (DIM,)),
        ]
    )
    packed = np.empty(len(rows), dtype=record)
    packed["fields"], packed["idlen"], packed["id"] = 2, 4, np.arange(len(rows))
    packed["vlen"], packed["dim"], packed["unused"], packed["v"] = 4 + 4 * DIM, DIM, 0, rows
    return b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0) + packed.tobytes() + struct.pack(">h", -1)


def _pgvector(url: str, base: Matrix, queries: Matrix, truth: np.ndarray[Any, Any]) -> Measured | str:
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None:
            return "the embedded PostgreSQL does not ship the `vector` extension: pgvector not measured"
        conn.execute("DROP TABLE IF EXISTS items")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(f"CREATE TABLE items (id int4 PRIMARY KEY, v vector({DIM}))")
        with conn.cursor().copy("COPY items (id, v) FROM STDIN (FORMAT BINARY)") as copy:
            stream = _copy_binary(base)
            for start in range(0, len(stream), 1 << 24):
                copy.write(stream[start : start + (1 << 24)])
        conn.execute("SET maintenance_work_mem = '6GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        conn.execute(
            "CREATE INDEX items_hnsw ON items USING hnsw (v vector_ip_ops) WITH (m = 16, ef_construction = 64)"
        )
        build = time.perf_counter() - started
        size = conn.execute("SELECT pg_relation_size('items_hnsw')").fetchone()[0]  # type: ignore[index]

        def search(query: Matrix) -> list[int]:
            literal = "[" + ",".join(f"{x:.6f}" for x in query) + "]"
            rows = conn.execute(f"SELECT id FROM items ORDER BY v <#> '{literal}'::vector LIMIT {K}").fetchall()
            return [r[0] for r in rows]

        ef, recall = 40, 0.0
        for ef in (40, 80, 160, 320):
            conn.execute(f"SET hnsw.ef_search = {ef}")
            found = np.array([_padded(search(q)) for q in queries[:100]])
            recall = _recall(found, truth[:100])
            if recall >= RECALL_GOAL:
                break
        p50, p99 = _latencies(search, queries, 100)
    return Measured("pgvector HNSW", recall, p50, p99, build, size / 2**20, f"ef_search={ef}")


# --- report --------------------------------------------------------------------------------------


def _row(
    figure: str, memloop: float, baseline: float | None, goal: str = "-", met: bool | None = None
) -> dict[str, Any]:
    """`ratio` is memloop/baseline for recall and memory, baseline/memloop (a speed-up) for times."""
    ratio = None
    if baseline and memloop == memloop:  # not NaN
        ratio = round(baseline / memloop if " ms " in figure or " build " in figure else memloop / baseline, 2)
    return {"figure": figure, "memloop": memloop, "baseline": baseline, "ratio": ratio, "goal": goal, "met": met}


def _rows(
    n: int, exact: Measured, flat: Measured, ivfs: tuple[Measured, Measured], pg: Measured | str, final: bool
) -> list[dict[str, Any]]:
    size, (ivf, safe) = _size(n), ivfs
    speedup = exact.p99_ms / ivf.p99_ms
    goal = f"≥ {SPEEDUP_GOAL:.0f}x faster" + ("" if final else " (goal is at 1e6)")
    rows = [
        _row(
            f"{size} recall@10 {ivf.name} {ivf.setting}",
            round(ivf.recall, 4),
            1.0,
            f"≥ {RECALL_GOAL}",
            ivf.recall >= RECALL_GOAL,
        ),
        _row(f"{size} p50 ms {ivf.name} vs numpy exact", round(ivf.p50_ms, 3), round(exact.p50_ms, 2)),
        _row(
            f"{size} p99 ms {ivf.name} vs numpy exact",
            round(ivf.p99_ms, 3),
            round(exact.p99_ms, 2),
            goal,
            speedup >= SPEEDUP_GOAL if final else None,
        ),
        _row(f"{size} headroom: recall@10 {safe.name} {safe.setting}", round(safe.recall, 4), 1.0),
        _row(
            f"{size} headroom: p99 ms {safe.name} {safe.setting} vs exact",
            round(safe.p99_ms, 3),
            round(exact.p99_ms, 2),
        ),
        _row(
            f"{size} build s {ivf.name} (train+add) [baseline: FlatIP add]",
            round(ivf.build_s, 2),
            round(flat.build_s, 2),
        ),
        _row(f"{size} memory MB {ivf.name} vs numpy matrix", round(ivf.memory_mb), round(exact.memory_mb)),
        _row(f"{size} p99 ms {flat.name} vs numpy exact", round(flat.p99_ms, 2), round(exact.p99_ms, 2)),
    ]
    if isinstance(pg, str):
        return [*rows, _row(f"{size} pgvector HNSW: {pg}", float("nan"), None)]
    versus = f"vs {pg.name} {pg.setting}"
    return [
        *rows,
        _row(
            f"{size} recall@10 {ivf.name} {versus}",
            round(ivf.recall, 4),
            round(pg.recall, 4),
            f"both ≥ {RECALL_GOAL}",
            min(ivf.recall, pg.recall) >= RECALL_GOAL,
        ),
        _row(f"{size} p99 ms {ivf.name} {versus} (SQL round trip)", round(ivf.p99_ms, 3), round(pg.p99_ms, 2)),
        _row(f"{size} p50 ms {ivf.name} {versus} (SQL round trip)", round(ivf.p50_ms, 3), round(pg.p50_ms, 2)),
        _row(f"{size} build s {ivf.name} {versus}", round(ivf.build_s, 1), round(pg.build_s, 1)),
        _row(f"{size} memory MB {ivf.name} vs {pg.name} index", round(ivf.memory_mb), round(pg.memory_mb)),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure every index at each size; rows of (figure, memloop, baseline, ratio, goal, met)."""
    sizes = [10_000, 20_000] if quick else [100_000, 1_000_000]  # quick: pgvector HNSW at 5e4 took 75 s
    rows: list[dict[str, Any]] = []
    seconds_per_nlogn: float | None = None
    with _postgres() as url:
        for n in sizes:
            base, queries = _data(n, QUERIES)
            truth = _exact_topk(base, queries)
            exact, flat = _numpy_exact(base, queries), _faiss_flat(base, queries)
            ivf = _faiss_ivf(base, queries, truth)
            projected = None if seconds_per_nlogn is None else seconds_per_nlogn * n * math.log(n)
            pg: Measured | str
            if projected is not None and projected > PGVECTOR_BUDGET_SECONDS:
                budget = PGVECTOR_BUDGET_SECONDS
                pg = f"HNSW build skipped: projected {projected:.0f} s from the smaller build (budget {budget:.0f} s)"
            else:
                pg = _pgvector(url, base, queries, truth)
                if isinstance(pg, Measured):
                    seconds_per_nlogn = pg.build_s / (n * math.log(n))
            rows += _rows(n, exact, flat, ivf, pg, final=n >= 1_000_000)
            del base
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="1e4 and 2e4 vectors instead of 1e5 and 1e6")
    rows = run(parser.parse_args().quick)
    print("memloop = FAISS (what memory would use); baseline = numpy exact or pgvector; ratio for times = speed-up")
    print(f"{'figure':<74} {'memloop':>10} {'baseline':>10} {'ratio':>8}  {'goal':<26} met")
    for row in rows:
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}"
        baseline = "" if row["baseline"] is None else row["baseline"]
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        print(f"{row['figure']:<74} {row['memloop']:>10} {baseline:>10} {ratio:>8}  {row['goal']:<26} {met}")


if __name__ == "__main__":
    main()
