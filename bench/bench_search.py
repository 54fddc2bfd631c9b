"""SearchMemories over gRPC on memory's own index: a tenant of many users plus one large user.

Not a test: prints figures, and `run(quick)` returns rows for `bench/run_all.py`.

Issue 15's shape: one tenant with 1,000 users x 1,000 memories plus one user with 1e5 memories
(1.1e6 in all); `--quick` uses 100 users x 200 plus one user with 30,000 (past the partition's IVF
threshold, so both index kinds are measured). Memory runs as a process in the whole stack on
embedded PostgreSQL (`running_stack`); the memories and their vectors (hashing embedder, computed
here by the same code memory runs) are COPYed into memory's tables (then ANALYZEd, as after any
bulk load), and memory is restarted so it builds its index from them exactly as after any restart.

Consolidation's sleep-time scheduler is off in this stack (`MEMLOOP_CONSOLIDATE_*=0`): seeding
by COPY makes every user look as if all their memories had just arrived, so the scheduler would
consolidate the whole tenant (1,001 users, 1.1e6 memories) during the measurement, work that in
operation is spread over the memories' arrival. Retrieval is what this measures.

Per user class, sequential SearchMemories calls, k=10, each with a query never asked before (the
hit cache never answers). Baseline: numpy exact search (one matrix-vector product and a partial
sort) over the same user's same vectors, in this process. recall@10 is tie-aware: a returned memory
counts when its exact score reaches the exact 10th best (hashing vectors of short texts tie often).

    .venv/bin/python -m bench.bench_search [--quick] [--large N] [--profile large|typical]
    .venv/bin/python -m bench.bench_search --under-learning [--quick]

`--under-learning` (issue 15) measures SearchMemories' latency while memory's ingestion is saturated,
one memory process against a split replica, in one stack (MiniLM, as in operation): the split
replica's retrieval process (`memory`) and ingestion process (`memory-ingest`), and a one-process
replica beside them (`memory-one`, MEMLOOP_MEMORY_ROLE=all: ingestion on idle threads in the
process that searches, the arrangement before the split). Rounds alternate: load (the worker's
FindConflicts, 16 new texts per call, from 3 callers) on `memory-one` while searching `memory-one`,
then load on `memory-ingest` while searching `memory`; each round also searches before the load.

`--profile large` (or `typical`) runs memory under `bench._sampler` from its restart and samples
that user's searches (the figures of that run carry the sampler's cost: read the profile, not the
times).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench._harness import Row, load_average, pct, row, running_stack, stop_service
from bench._sampler import arm, summarise
from bench._search_probe import breakdown, request_dump
from services.cli.stack import Stack
from services.common.auth import bearer_metadata
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.infra.processes import ServiceProcess
from services.memory.core.adapters.embedders import HashingEmbedder

TENANT = "bench"
K = 10
WORDS = [
    "rollout", "budget", "hiring", "offsite", "invoice", "roadmap", "security", "launch", "review", "audit",
    "Bob", "Carol", "Dan", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia",
    "Berlin", "Lisbon", "Austin", "Osaka", "Nairobi", "Lima", "Oslo", "prefers", "morning", "evening",
    "tea", "coffee", "window", "aisle", "email", "phone", "weekly", "monthly", "draft", "final",
]  # fmt: skip
EMBEDDER = HashingEmbedder()
NO_CONSOLIDATION = {"MEMLOOP_CONSOLIDATE_AFTER_MEMORIES": "0", "MEMLOOP_CONSOLIDATE_IDLE_SECONDS": "0"}


def _text(rng: np.random.Generator) -> str:
    return " ".join(WORDS[i] for i in rng.choice(len(WORDS), size=6, replace=False)) + f" #{rng.integers(1_000_000)}"


def _seed(stack: Stack, users: dict[str, int]) -> dict[str, tuple[list[str], np.ndarray]]:
    """COPY memories, provenance and vectors; return each user's (memory ids, vectors)."""
    url = stack.memory_db_url.replace("postgresql+psycopg://", "postgresql://", 1)
    rng = np.random.default_rng(11)
    kept: dict[str, tuple[list[str], np.ndarray]] = {}
    with psycopg.connect(url) as conn:
        for user, n in users.items():
            ids = [f"m-{user}-{i}" for i in range(n)]
            texts = [_text(rng) for _ in range(n)]
            vectors = EMBEDDER.embed(texts)
            with conn.cursor().copy(
                "COPY memories (memory_id, tenant, user_id, type, text, status, confidence, origin, candidate_key,"
                " event_id, trace_id, policy_version, status_event_id) FROM STDIN"
            ) as copy:
                for i, (memory_id, text) in enumerate(zip(ids, texts, strict=True)):
                    event = f"evt-{memory_id}"
                    kind = ("episode", "preference", "fact")[i % 3]
                    copy.write_row(
                        (memory_id, TENANT, user, kind, text, "active", 0.8, "owner", f"ck-{memory_id}", event,
                         "t" * 32, "bench-policy-1", event)
                    )  # fmt: skip
            with conn.cursor().copy("COPY memory_sources (memory_id, event_id, tenant, trace_id) FROM STDIN") as copy:
                for memory_id in ids:
                    copy.write_row((memory_id, f"evt-{memory_id}", TENANT, "t" * 32))
            with conn.cursor().copy(
                "COPY memory_vectors (memory_id, embedder, tenant, dim, vector) FROM STDIN"
            ) as copy:
                for memory_id, vector in zip(ids, vectors, strict=True):
                    copy.write_row((memory_id, EMBEDDER.name, TENANT, EMBEDDER.dim, vector.astype("<f4").tobytes()))
            kept[user] = (ids, vectors)
        # As after any bulk load: fresh planner statistics. Without them the re-check's plan for a
        # user's 30 hits scanned the tenant's provenance index (19 ms instead of 0.2 ms) until
        # autovacuum's analyze came round, a minute or more later.
        conn.execute("ANALYZE memories, memory_sources, memory_vectors")
    return kept


def _numpy_exact(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = vectors @ query
    top = np.argpartition(-scores, K)[:K]
    return top[np.argsort(-scores[top])]


def measure(stack: Stack, user: str, ids: list[str], vectors: np.ndarray, calls: int) -> dict[str, Any]:
    """The calls first, then the baseline and recall on their answers: at 1e5 vectors the exact
    search is 5-30 ms of this process's CPU (BLAS threads that spin on after it), and run between
    the calls it took a core from the next SearchMemories on 2 cores: the health check beside the
    large user's calls had twice the p99 of the typical user's (11.6 vs 6.6 ms, one quick run)."""
    metadata = bearer_metadata(stack.token(TENANT, roles=("reader",), subject="bench"))
    rng = np.random.default_rng(hash(user) % 2**32)
    search_ms, exact_ms, floor_ms, found = [], [], [], 0
    position = {memory_id: i for i, memory_id in enumerate(ids)}
    answered = []
    with grpc.insecure_channel(stack.services["memory"].target) as channel:
        stub = pb_grpc.MemoryServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        stub.SearchMemories(pb.SearchMemoriesRequest(tenant=TENANT, user=user, query="warm up", k=K), metadata=metadata)
        for i in range(calls):
            query = f"{_text(rng)} q{i}"
            started = time.perf_counter()
            response = stub.SearchMemories(
                pb.SearchMemoriesRequest(tenant=TENANT, user=user, query=query, k=K), metadata=metadata, timeout=30
            )
            search_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            health.Check(health_pb2.HealthCheckRequest(), timeout=30)  # the machine's floor for one RPC
            floor_ms.append((time.perf_counter() - started) * 1000)
            answered.append((query, [r.memory.memory_id for r in response.results[:K]]))
    for query, returned in answered:
        vector = EMBEDDER.embed([query])[0]
        started = time.perf_counter()
        truth = _numpy_exact(vectors, vector)
        exact_ms.append((time.perf_counter() - started) * 1000)
        # Tie-aware recall: the hashing embedder gives many memories the same score, so a returned
        # memory counts if its exact score reaches the exact 10th best (any of the tied is right).
        scores = vectors @ vector
        tenth = float(scores[truth[-1]]) - 1e-5
        found += sum(1 for memory_id in returned if scores[position[memory_id]] >= tenth)
    return {"search": search_ms, "exact": exact_ms, "floor": floor_ms, "recall": found / (calls * K)}


def _restart_memory(
    stack: Stack, profile_to: Path | None, probe_to: Path | None = None, code: Path | None = None
) -> None:
    """Memory again, so that it builds its index from the seeded vectors as after any restart;
    under the sampling profiler (not yet sampling) when `profile_to` is given, under the stage
    probe (`bench._search_probe`) when `probe_to` is; from the `services` package under `code`
    (another checkout: the A/B rounds' baseline) when given."""
    memory = stack.services["memory"]
    memory.process.terminate(timeout=60)
    env: dict[str, str] = {}
    module = memory.process.module
    module = "services.memory.entrypoints.main" if module.startswith("bench.") else module
    if profile_to is not None:
        env = {
            "MEMLOOP_BENCH_PROFILE_TARGET": module,
            "MEMLOOP_BENCH_PROFILE_OUT": str(profile_to),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        module = "bench._sampler"
    elif probe_to is not None:
        env = {
            "MEMLOOP_BENCH_PROBE_TARGET": module,
            "MEMLOOP_BENCH_PROBE_OUT": str(probe_to),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        module = "bench._search_probe"
    if code is not None:
        env["PYTHONPATH"] = f"{code}:{Path(__file__).resolve().parents[1]}"
        # `python -m` puts the working folder (this checkout) first on sys.path, ahead of PYTHONPATH:
        # without this the "baseline" ran this checkout's services and every A/B was an A/A.
        env["PYTHONSAFEPATH"] = "1"
    memory.process = ServiceProcess(
        module,
        {**memory.env, **env},
        log_path=memory.process.log_path,
        name="memory",
        own_session=memory.process.own_session,
    ).start()
    memory.process.wait_healthy(memory.grpc_port, timeout=3600.0)


def _ab_rounds(
    stack: Stack, kept: dict[str, tuple[list[str], np.ndarray]], baseline: Path, rounds: int, calls: int
) -> None:
    """Alternating rounds on the same stack and data: memory restarted from `baseline`'s code, then
    from this checkout's (the order swapped every round), each round timing both users; prints each
    round, the medians, and percentiles over every call of all rounds with the ratio change /
    baseline (a round's p99 of 100 calls is its second-slowest call: on a loaded machine the pooled
    tail is the steadier figure), so a change is judged against a baseline measured beside it."""
    results: dict[str, dict[str, list[float]]] = {}
    pooled: dict[tuple[str, str], dict[str, list[float]]] = {}
    print(f"   A/B rounds: load average {load_average()} at the start", flush=True)
    for r in range(rounds):
        order = [("baseline", baseline), ("change", None)]
        for variant, code in order if r % 2 == 0 else order[::-1]:
            _restart_memory(stack, None, None, code)
            for label, user in (("typical", "u7"), ("large", "whale")):
                before = load_average()
                m = measure(stack, user, *kept[user], calls)
                samples = pooled.setdefault((label, variant), {"search": [], "floor": []})
                samples["search"] += m["search"]
                samples["floor"] += m["floor"]
                figures = {
                    "p50": pct(m["search"], 50),
                    "p99": pct(m["search"], 99),
                    "floor p99": pct(m["floor"], 99),
                    "recall": m["recall"],
                }
                for name, value in figures.items():
                    results.setdefault(f"{label} {variant}", {}).setdefault(name, []).append(value)
                print(
                    f"   round {r + 1} {variant:<8} {label:<7}: p50 {figures['p50']:.2f} / p99 {figures['p99']:.2f} ms,"
                    f" health check p99 {figures['floor p99']:.2f} ms, recall {figures['recall']:.3f}; load {before}",
                    flush=True,
                )
    print(f"   medians of {rounds} rounds (load average {load_average()} at the end):")
    for key, figures in results.items():
        medians = ", ".join(f"{name} {float(np.median(values)):.2f}" for name, values in figures.items())
        print(f"     {key:<17} {medians}")
    print(f"   over every call of the {rounds} rounds (change / baseline):")
    for label in ("typical", "large"):
        base, change = pooled[(label, "baseline")], pooled[(label, "change")]
        cells = []
        for q in (50, 90, 99):
            b, c = pct(base["search"], q), pct(change["search"], q)
            cells.append(f"p{q} {c:.2f} vs {b:.2f} ms ({c / b:.2f})")
        floors = f"health check p99 {pct(change['floor'], 99):.2f} vs {pct(base['floor'], 99):.2f} ms"
        print(f"     {label:<7} ({len(change['search'])} calls each): {', '.join(cells)}; {floors}", flush=True)


def run(
    quick: bool,
    profile: str | None = None,
    large: int | None = None,
    probe: bool = False,
    baseline: Path | None = None,
    rounds: int = 0,
) -> list[Row]:
    typical_users, typical_n, big_n = (100, 200, 30_000) if quick else (1_000, 1_000, 100_000)
    big_n = big_n if large is None else large
    users = {f"u{i}": typical_n for i in range(typical_users)} | {"whale": big_n}
    total = sum(users.values())
    rows: list[Row] = []
    # An operator's MEMLOOP_LEARNING_PRIORITY reaches the stack (the GIL what-if: see the README).
    priority = {k: v for k, v in os.environ.items() if k == "MEMLOOP_LEARNING_PRIORITY"}
    # One memory process: this measures retrieval over a bulk-loaded index, and a split replica's
    # ingestion process would build a second index of the same 1.1e6 rows meanwhile.
    with running_stack("search", "hashing", NO_CONSOLIDATION | priority, memory_split=False) as stack:
        started = time.perf_counter()
        kept = _seed(stack, users)
        print(f"   seeded {total:,} memories by COPY in {time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        profile_to = Path(tempfile.mkdtemp(prefix="memloop-bench-search-")) / "memory.json" if profile else None
        probe_to = Path(tempfile.mkdtemp(prefix="memloop-bench-probe-")) / "memory.json" if probe else None
        # With an A/B baseline, the first phase (and its probe) runs the baseline's code.
        _restart_memory(stack, profile_to, probe_to, baseline if rounds else None)
        print(f"   memory restarted and indexed {total:,} memories in {time.perf_counter() - started:.1f} s")
        for label, user in (("typical user", "u7"), ("large user", "whale")):
            before = load_average()
            ids, vectors = kept[user]
            if profile_to is not None:
                if not label.startswith(profile or "-"):
                    continue  # a profiling run measures the profiled user only
                arm(profile_to)
            m = measure(stack, user, ids, vectors, 100 if quick else 300)
            print(f"   {label}: load average {before} before, {load_average()} after", flush=True)
            if probe_to is not None:
                report = request_dump(probe_to)
                print(
                    f"   probe: {report['gc_tracked']:,} GC-tracked objects ({report['gc_frozen']:,} frozen),"
                    f" thresholds {report['gc_threshold']}, {report['native_threads']} threads; slowest calls (ms):"
                )
                for line in breakdown(report, user, m["search"]):
                    print(f"     {line}", flush=True)
            p99, base = pct(m["search"], 99), pct(m["exact"], 99)
            p50s, p50e = pct(m["search"], 50), pct(m["exact"], 50)
            p50f, p99f = pct(m["floor"], 50), pct(m["floor"], 99)
            print(
                f"   {label}: SearchMemories p50 {p50s:.2f} / p99 {p99:.2f} ms, numpy exact p50 {p50e:.3f} / p99"
                f" {base:.3f} ms, gRPC health check (floor) p50 {p50f:.2f} / p99 {p99f:.2f} ms",
                flush=True,
            )
            size = f"{len(ids):,} of {total:,} memories"
            rows += [
                row(
                    f"SearchMemories p99 ms over gRPC, {label} ({size}), k={K} [baseline: numpy exact, in-process]",
                    round(p99, 2),
                    round(base, 3),
                    round(p99 / base, 2),
                    goal="<= 10 ms",
                    met=p99 <= 10,
                ),
                row(
                    f"SearchMemories p50 ms over gRPC, {label} [baseline: numpy exact, in-process]",
                    round(p50s, 2),
                    round(p50e, 3),
                    round(p50s / p50e, 2),
                    goal="reported",
                    met=None,
                ),
                row(
                    f"SearchMemories p99 ms, {label} [baseline: gRPC health check on the same channel, the"
                    " machine's floor for one call]",
                    round(p99, 2),
                    round(p99f, 2),
                    round(p99 / p99f, 2),
                    goal="reported",
                    met=None,
                ),
                row(
                    f"SearchMemories recall@10, {label} [baseline: numpy exact = 1.0]",
                    round(m["recall"], 3),
                    1.0,
                    round(m["recall"], 3),
                    goal=">= 0.95",
                    met=m["recall"] >= 0.95,
                ),
            ]
        if baseline is not None and rounds:
            _ab_rounds(stack, kept, baseline, rounds, 100 if quick else 300)
        if profile_to is not None:
            stop_service(stack, "memory")
            report = json.loads(profile_to.read_text())
            for view in ("busy", "wall"):
                print(f"   profile of memory during the {profile} user's searches ({view}):")
                for line in summarise(report, top=25, view=view, contains="services/"):
                    print(f"     {line}")
    return rows


LEARNING_LOADERS = 3
LEARNING_CANDIDATES = 16
LEARNING_GAP_SECONDS = 0.02


def _conflict_request(user: str, call: int) -> pb.FindConflictsRequest:
    from services.common import convert
    from services.common.vocabulary import Candidate, MemoryType, Origin, Sensitivity

    return pb.FindConflictsRequest(
        tenant=TENANT,
        user=user,
        candidates=[
            convert.candidate_to_pb(
                Candidate(
                    candidate_key=f"k{call}-{i}",
                    type=MemoryType.PREFERENCE,
                    origin=Origin.OWNER,
                    sensitivity=Sensitivity.NORMAL,
                    confidence=0.9,
                    text=f"call {call} item {i}: keep my meetings after {9 + i % 8}:30 on weekdays, not mornings",
                    event_id=f"evt-{call}",
                    trace_id="0" * 32,
                    intent_key="meeting_time_window",
                )
            )
            for i in range(LEARNING_CANDIDATES)
        ],
    )


def _seed_through_the_loop(stack: Stack, users: int) -> str:
    """`users` of Alice's days through serving, the worker and memory's ingestion; the first user's
    name (whose memories the searches read), once every event is processed."""
    from bench._harness import ProcessedEvents, alice_requests
    from services.common.gen.memloop.v1 import serving_service_pb2_grpc

    requests = alice_requests(4 * users, TENANT)
    token = bearer_metadata(stack.token(TENANT, roles=("reader", "writer"), subject="bench"))
    with grpc.insecure_channel(stack.services["serving"].target) as channel:
        serving = serving_service_pb2_grpc.ServingServiceStub(channel)
        for request in requests:
            serving.HandleRequest(request, metadata=token, timeout=60)
    ProcessedEvents(stack.memory_db_url, TENANT).wait_for(len(requests), timeout=600)
    return requests[0].user


def _searches(stub: pb_grpc.MemoryServiceStub, metadata: Any, count: int, tag: str, user: str) -> list[float]:
    """`count` SearchMemories with queries never asked before, one every LEARNING_GAP_SECONDS; ms each."""
    rng = np.random.default_rng(abs(hash(tag)) % 2**32)
    times = []
    for i in range(count):
        request = pb.SearchMemoriesRequest(tenant=TENANT, user=user, query=f"{_text(rng)} {tag} {i}", k=K)
        started = time.perf_counter()
        stub.SearchMemories(request, metadata=metadata, timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(LEARNING_GAP_SECONDS)
    return times


def _under_load(
    stack: Stack, search_at: str, load_at: str, searches: int, tag: str, user: str
) -> tuple[list[float], float]:
    """Searches on `search_at` while LEARNING_LOADERS callers send FindConflicts to `load_at`.
    Returns the search times and FindConflicts calls completed per second meanwhile."""
    import threading

    metadata = bearer_metadata(stack.token(TENANT, roles=("reader",), subject="bench"))
    service = bearer_metadata(stack.service_token())
    stop, done, calls = threading.Event(), [0], iter(range(10**9))

    def load() -> None:
        with grpc.insecure_channel(stack.services[load_at].target) as channel:
            stub = pb_grpc.MemoryServiceStub(channel)
            while not stop.is_set():
                try:
                    stub.FindConflicts(_conflict_request("u1", next(calls)), metadata=service, timeout=60)
                except grpc.RpcError:
                    continue  # starved past its deadline on a busy machine: the load goes on
                done[0] += 1

    loaders = [threading.Thread(target=load, daemon=True) for _ in range(LEARNING_LOADERS)]
    for loader in loaders:
        loader.start()
    with grpc.insecure_channel(stack.services[search_at].target) as channel:
        stub = pb_grpc.MemoryServiceStub(channel)
        deadline = time.monotonic() + 60
        while done[0] < LEARNING_LOADERS and time.monotonic() < deadline:
            time.sleep(0.05)  # every caller's first call went through: the embedder is busy
        before, started = done[0], time.monotonic()
        times = _searches(stub, metadata, searches, tag, user)
        completed = done[0] - before
        rate = completed / (time.monotonic() - started)
    stop.set()
    for loader in loaders:
        loader.join(90)
    return times, rate


def run_under_learning(quick: bool) -> list[Row]:
    """Search p50/p99 under saturated ingestion, one process vs the split replica, alternating rounds."""
    rounds, searches = (2, 45) if quick else (4, 300)
    rows: list[Row] = []
    with running_stack("search-learning", "minilm", NO_CONSOLIDATION, memory_split=True, console=False) as stack:
        stack.add_service("memory-one", "memory", {"MEMLOOP_MEMORY_ROLE": "all"})
        metadata = bearer_metadata(stack.token(TENANT, roles=("reader",), subject="bench"))
        user = _seed_through_the_loop(stack, users=5)
        modes = {"one process": ("memory-one", "memory-one"), "split": ("memory", stack.ingest_name("memory"))}
        loaded: dict[str, list[list[float]]] = {m: [] for m in modes}
        quiet: dict[str, list[list[float]]] = {m: [] for m in modes}
        throughput: dict[str, list[float]] = {m: [] for m in modes}
        stub_of = pb_grpc.MemoryServiceStub
        print(f"   load average before: {load_average()}")
        for r in range(rounds):
            for mode, (search_at, load_at) in modes.items():
                with grpc.insecure_channel(stack.services[search_at].target) as channel:
                    quiet[mode].append(_searches(stub_of(channel), metadata, searches // 3, f"q{r}", user))
                times, completed = _under_load(stack, search_at, load_at, searches, f"l{r}", user)
                loaded[mode].append(times)
                throughput[mode].append(completed)
                print(
                    f"   round {r + 1} {mode:<11}: search p50 {pct(times, 50):6.1f} ms, p99 {pct(times, 99):6.1f} ms, "
                    f"max {max(times):6.1f} ms (quiet p99 {pct(quiet[mode][-1], 99):5.1f} ms); "
                    f"{completed:.2f} FindConflicts x{LEARNING_CANDIDATES} per s meanwhile; load {load_average()}",
                    flush=True,
                )

        def median_of(mode: str, q: float, runs: dict[str, list[list[float]]]) -> float:
            return float(np.median([pct(times, q) for times in runs[mode]]))

        for q in (50, 99):
            one, split = median_of("one process", q, loaded), median_of("split", q, loaded)
            rows.append(
                row(
                    f"SearchMemories p{q} under saturated ingestion, ms (median of {rounds} rounds; baseline: "
                    "one memory process, ingestion on idle threads)",
                    round(split, 1),
                    round(one, 1),
                    round(split / one, 2) if one else None,
                )
            )
            one_q, split_q = median_of("one process", q, quiet), median_of("split", q, quiet)
            rows.append(
                row(f"SearchMemories p{q} with ingestion quiet, ms (same stack)", round(split_q, 1), round(one_q, 1))
            )
        rows.append(
            row(
                "FindConflicts calls per second during the loaded searches (median; ingestion still progressed)",
                round(float(np.median(throughput["split"])), 2),
                round(float(np.median(throughput["one process"])), 2),
            )
        )
        print(f"   load average after: {load_average()}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="100 x 200 + 30,000 instead of 1,000 x 1,000 + 1e5")
    parser.add_argument("--profile", choices=("large", "typical"), help="sample memory during this user's searches")
    parser.add_argument("--large", type=int, help="the large user's memories (e.g. --quick --large 100000)")
    parser.add_argument("--probe", action="store_true", help="time the stages of memory's slowest calls")
    parser.add_argument("--baseline-code", type=Path, help="a checkout's root whose services/ is the A/B baseline")
    parser.add_argument("--rounds", type=int, default=0, help="A/B rounds against --baseline-code after the run")
    parser.add_argument("--under-learning", action="store_true", help="search p99 under saturated ingestion (issue 15)")
    args = parser.parse_args()
    if args.under_learning:
        rows = run_under_learning(args.quick)
    else:
        rows = run(args.quick, args.profile, args.large, args.probe, args.baseline_code, args.rounds)
    print(f"{'figure':<110} {'memloop':>9} {'baseline':>9} {'ratio':>7}")
    for r in rows:
        ratio = "" if r["ratio"] is None else r["ratio"]
        print(f"{r['figure']:<110} {r['memloop']!s:>9} {r['baseline']!s:>9} {ratio!s:>7}")


if __name__ == "__main__":
    main()
