"""GetContext: p50/p99 through gRPC for one user with 1e4 and with 1e5 memories, against
SearchMemories (its memory half) measured in the same run.

Not a test: prints figures, and `run(quick)` returns rows for `bench/run_all.py`.

The whole stack runs as processes on embedded PostgreSQL (`running_stack`, as `memloop up`). The
users' memories are written straight into memory's database with one INSERT … SELECT each (the
loop would need hours for 1e5 events), as active records with provenance, and memory is restarted
so that it embeds and indexes them exactly as it does after any restart; five learned procedures
are saved through LearnedProcedureService. Then, per user, GetContext and SearchMemories are called
alternately, sequentially, each with a query never asked before (so the hit cache never answers),
k=10, through plain gRPC stubs with a bearer token; and GetContext once more through
memloop-client's `context()` (what an agent sees, client overhead included).

- memloop: GetContext (search + applicable procedures + version), one round trip;
- baseline: SearchMemories for the same user, same k, in the same run; the ratio is the price of
  the procedures and the version on top of the search an agent would otherwise make anyway.

Embedder: `hashing` (the model would take minutes to embed 1e5 seeds on this machine); with the
default MiniLM each query adds its embedding time to both figures alike.

    .venv/bin/python -m bench.bench_context [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import grpc
import psycopg

from bench._harness import Row, load_average, pct, row, running_stack, wait_indexed
from memloop_client import Client
from services.cli.stack import Stack
from services.common.auth import bearer_metadata
from services.common.gen.memloop.v1 import learned_procedure_service_pb2 as lpb
from services.common.gen.memloop.v1 import learned_procedure_service_pb2_grpc as lpb_grpc
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.memory.core.adapters.embedders import HashingEmbedder

TENANT = "bench"
K = 10
CALLS = 300
TOPICS = ["rollout", "budget", "hiring", "offsite", "invoice", "roadmap", "security", "launch", "review", "audit"]
PEOPLE = ["Bob", "Carol", "Dan", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia"]
PLACES = ["Berlin", "Lisbon", "Austin", "Osaka", "Nairobi", "Lima", "Oslo"]
_SEED = """
INSERT INTO memories (memory_id, tenant, user_id, type, text, status, confidence, origin, candidate_key, event_id,
                      trace_id, policy_version, status_event_id)
SELECT format('mem-%%s-%%s', %(user)s::text, g), %(tenant)s::text, %(user)s::text,
       (ARRAY['episode', 'preference', 'fact'])[1 + g %% 3],
       format('%%s met %%s in %%s about the %%s, item %%s of week %%s',
              (%(people)s::text[])[1 + g %% 12], (%(people)s::text[])[1 + (g / 12) %% 12],
              (%(places)s::text[])[1 + g %% 7], (%(topics)s::text[])[1 + (g / 7) %% 10], g, g %% 52),
       'active', 0.5 + (g %% 50) / 100.0, 'owner', format('ck-%%s-%%s', %(user)s::text, g),
       format('evt-%%s-%%s', %(user)s::text, g), md5(g::text), 'bench-policy-1',
       format('evt-%%s-%%s', %(user)s::text, g)
FROM generate_series(1, %(n)s) AS g
"""
_SOURCES = """
INSERT INTO memory_sources (memory_id, event_id, tenant, trace_id)
SELECT memory_id, event_id, tenant, trace_id FROM memories WHERE tenant = %(tenant)s AND user_id = %(user)s
"""


def _seed(stack: Stack, user: str, n: int) -> None:
    """The user's memories and their provenance by SQL, and their vectors computed here by the same
    embedder memory runs (memory's own start-up back-fill writes all missing vectors in one statement,
    which PostgreSQL refuses past 65,535 parameters, about 13,000 memories)."""
    url = stack.memory_db_url.replace("postgresql+psycopg://", "postgresql://", 1)
    embedder = HashingEmbedder()
    with psycopg.connect(url) as conn:
        conn.execute(
            _SEED, {"tenant": TENANT, "user": user, "n": n, "people": PEOPLE, "places": PLACES, "topics": TOPICS}
        )
        conn.execute(_SOURCES, {"tenant": TENANT, "user": user})
        rows = conn.execute(
            "SELECT memory_id, text FROM memories WHERE tenant = %s AND user_id = %s", (TENANT, user)
        ).fetchall()
        with conn.cursor().copy("COPY memory_vectors (memory_id, embedder, tenant, dim, vector) FROM STDIN") as copy:
            for start in range(0, len(rows), 5_000):
                batch = rows[start : start + 5_000]
                vectors = embedder.embed([text for _, text in batch])
                for (memory_id, _), vector in zip(batch, vectors, strict=True):
                    copy.write_row((memory_id, embedder.name, TENANT, embedder.dim, vector.astype("<f4").tobytes()))
        # As after any bulk load (bench_search does the same): fresh planner statistics. Without them
        # the first phase measured stale plans: the re-check of a search's hits scanned the tenant's
        # provenance index per hit (45 ms a read with EXPLAIN ANALYZE, against 0.4 ms once analysed).
        conn.execute("ANALYZE memories, memory_sources, memory_vectors")


def _save_procedures(stack: Stack) -> None:
    token = stack.token(TENANT, roles=("reviewer",), subject="officer")  # saving a procedure is a decision
    with grpc.insecure_channel(stack.services["memory"].target) as channel:
        stub = lpb_grpc.LearnedProcedureServiceStub(channel)
        for i, topic in enumerate(TOPICS[:5]):
            stub.SaveLearnedProcedure(
                lpb.SaveLearnedProcedureRequest(
                    tenant=TENANT,
                    intent_key=f"bench.{topic}",
                    title=f"{topic} checks",
                    kind=lpb.PROCEDURE_KIND_SUBSTANTIVE,
                    scope="meetings",
                    trigger=f"a {topic} meeting",
                    action=f"ask for the {topic} agenda {i}",
                    rationale="bench",
                ),
                metadata=bearer_metadata(token),
                timeout=30,
            )


def _query(i: int, salt: str) -> str:
    return f"{PEOPLE[i % 12]} {TOPICS[(i // 12) % 10]} in {PLACES[i % 7]} {salt}{i}"


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def measure(stack: Stack, user: str, calls: int) -> dict[str, list[float]]:
    """Milliseconds per call of GetContext, SearchMemories (alternating) and the client's context()."""
    token = stack.token(TENANT, roles=("reader",), subject="bench")
    metadata = bearer_metadata(token)
    target = stack.services["memory"].target
    times: dict[str, list[float]] = {"context": [], "search": [], "client": []}
    with (
        grpc.insecure_channel(target) as channel,
        Client(serving=stack.services["serving"].target, memory=target, tenant=TENANT, token=token) as client,
    ):
        stub = pb_grpc.MemoryServiceStub(channel)
        first = stub.GetContext(pb.GetContextRequest(tenant=TENANT, user=user, query="warm up", k=K), metadata=metadata)
        if len(first.memories) != K or len(first.procedures) != 5:
            raise RuntimeError(f"{user}: expected {K} memories and 5 procedures, got {first}")
        for i in range(calls):
            asked = _query(i, "a")
            context = pb.GetContextRequest(tenant=TENANT, user=user, query=_query(i, "c"), k=K)
            search = pb.SearchMemoriesRequest(tenant=TENANT, user=user, query=_query(i, "s"), k=K)
            times["context"].append(_timed(partial(stub.GetContext, context, metadata=metadata, timeout=30)))
            times["search"].append(_timed(partial(stub.SearchMemories, search, metadata=metadata, timeout=30)))
            times["client"].append(_timed(partial(client.context, user, asked, k=K)))
    return times


def run(quick: bool) -> list[Row]:
    sizes = [1_000, 10_000] if quick else [10_000, 100_000]
    rows: list[Row] = []
    with running_stack("context", "hashing") as stack:
        for n in sizes:
            _seed(stack, f"u{n}", n)
        memory = stack.services["memory"]
        memory.process.terminate(timeout=30)
        started = time.perf_counter()
        memory.process.start()  # embeds and indexes every seeded memory, as after any restart
        memory.process.wait_healthy(memory.grpc_port, timeout=1800.0)
        print(f"   memory restarted and indexed {sum(sizes):,} memories in {time.perf_counter() - started:.1f} s")
        print(f"   every memory process indexes them after {wait_indexed(stack, sum(sizes)):.1f} s more", flush=True)
        _save_procedures(stack)
        for n in sizes:
            before = load_average()
            times = measure(stack, f"u{n}", CALLS // 3 if quick else CALLS)
            print(f"   {n:,} memories: load average {before} before, {load_average()} after", flush=True)
            context, search, client = times["context"], times["search"], times["client"]
            p99, base99 = pct(context, 99), pct(search, 99)
            label = f"{n:.0e}".replace("+0", "")
            rows += [
                row(
                    f"GetContext p99 ms, {label} memories, k={K}, 5 procedures [baseline: SearchMemories]",
                    round(p99, 2),
                    round(base99, 2),
                    round(p99 / base99, 2),
                ),
                row(
                    f"GetContext p50 ms, {label} memories [baseline: SearchMemories]",
                    round(pct(context, 50), 2),
                    round(pct(search, 50), 2),
                    round(pct(context, 50) / pct(search, 50), 2),
                ),
                row(
                    f"memloop-client context() p99 ms, {label} memories [baseline: raw GetContext stub]",
                    round(pct(client, 99), 2),
                    round(p99, 2),
                    round(pct(client, 99) / p99, 2),
                ),
            ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="1e3 and 1e4 memories instead of 1e4 and 1e5")
    rows = run(parser.parse_args().quick)
    print(f"{'figure':<100} {'memloop':>9} {'baseline':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['figure']:<100} {r['memloop']:>9} {r['baseline']:>9} {r['ratio']:>6}")


if __name__ == "__main__":
    main()
