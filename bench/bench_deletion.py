"""Deletion: time from Forget's acknowledgement to every location done (p50/p99), for one memory
and for a user with 10,000 memories.

Not a test: prints figures, and `run(quick)` returns rows (figure, memloop, baseline, ratio, goal,
met) for `bench/run_all.py`.

The whole stack runs as processes on embedded PostgreSQL and NATS (`services.cli.stack.Stack`,
as `memloop up` starts it) with two memory replicas, so "every location" includes the second
replica's index and its rewritten files. Memories are written through ApplyLearning, one event per
memory (the worst case for the content step: one serving call per event), with the hashing
embedder (deletion never embeds; the model would only slow the seeding).

- memloop: the deletion's `create_time` (its acknowledging transaction) → its `complete_time` (the
  last location recorded done), both from GetDeletion, both the server's clock. Measured on the
  server because the client's "call returned" can come after completion: the workflow starts at
  the commit, while the acknowledgement is still dropping the local index entries and cache.
- baseline: the acknowledgement itself (the Forget call's latency), i.e. the part a caller waits
  for; the ratio says how much longer the whole workflow takes than what the caller sees.

    .venv/bin/python -m bench.bench_deletion [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from services.common import convert
from services.common.decision_signing import DecisionSigner, load_signer
from services.common.gen.memloop.v1 import candidate_pb2 as cpb
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import memory_service_pb2_grpc as pb_grpc
from services.common.grpc_client import sync_channel
from services.common.vocabulary import MemoryType, candidate_key

TENANT = "bench"
ONE_MEMORY_GOAL_S = {"p50": 0.25, "p99": 1.0}
USER_GOAL_S = 5.0
USER_MEMORIES = 10_000
ENV = {
    "MEMLOOP_LOG_LEVEL": "WARNING",
    "MEMLOOP_DELETION_POLL_SECONDS": "1",
    "MEMLOOP_REPLICA_HEARTBEAT_SECONDS": "1",
    "MEMLOOP_REPLICA_LIVENESS_SECONDS": "15",
    # Off: the sleep-time scheduler consolidates the 10,000 memories just seeded while the forget
    # runs, and the forget waits for that write-back by design (the user's lock); that wait is
    # consolidation's cost, not the forget's.
    "MEMLOOP_CONSOLIDATE_AFTER_MEMORIES": "0",
    "MEMLOOP_CONSOLIDATE_IDLE_SECONDS": "0",
}


@dataclass(frozen=True)
class Sample:
    acknowledged_s: float
    to_done_s: float


@contextmanager
def _stack() -> Iterator[Stack]:
    data_dir = Path(tempfile.mkdtemp(prefix="memloop-bench-deletion-"))
    stack = Stack(StackSpec(data_dir=data_dir, embedder="hashing", memory_replicas=2, extra_env=ENV))
    try:
        yield stack.start()
    finally:
        stack.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _decision(user: str, text: str) -> cpb.Decision:
    return cpb.Decision(
        candidate=cpb.Candidate(
            candidate_key=candidate_key(TENANT, user, MemoryType.FACT, text),
            type=cpb.MEMORY_TYPE_FACT,
            origin=cpb.ORIGIN_OWNER,
            sensitivity=cpb.SENSITIVITY_NORMAL,
            confidence=0.95,
            text=text,
            version=1,
        ),
        outcome=cpb.DECISION_OUTCOME_STORE,
        policy_version="bench",
    )


def _learn(memory: Any, user: str, text: str, signer: DecisionSigner) -> str:
    """Write one memory through ApplyLearning, signed with the stack's policy key as policy would."""
    event_id = str(uuid.uuid4())
    message = _decision(user, text)
    message.signature = signer.sign(convert.decision_from_pb(message), tenant=TENANT, user=user, event_id=event_id)
    request = pb.ApplyLearningRequest(
        event_id=event_id,
        trace_id=uuid.uuid4().hex,
        tenant=TENANT,
        user=user,
        decisions=[message],
    )
    return str(memory.ApplyLearning(request, timeout=60).applied[0].memory_id)


def _forget(memory: Any, request: pb.ForgetRequest) -> Sample:
    """Forget, then poll GetDeletion until complete; both ends of the interval are the server's."""
    started = time.perf_counter()
    ack = memory.Forget(request, timeout=300)
    acknowledged_s = time.perf_counter() - started
    get = pb.GetDeletionRequest(tenant=TENANT, deletion_id=ack.deletion_id)
    deadline = time.monotonic() + 600
    while True:
        found = memory.GetDeletion(get, timeout=30).deletion
        if found.complete:
            to_done = (found.complete_time.ToNanoseconds() - found.create_time.ToNanoseconds()) / 1e9
            return Sample(acknowledged_s, to_done)
        if time.monotonic() > deadline:
            raise SystemExit(f"deletion {ack.deletion_id} did not complete: {found}")
        time.sleep(0.02)  # both ends are the server's clock; a 2 ms poll took 16% of memory's CPU


def one_memory_samples(memory: Any, n: int, signer: DecisionSigner) -> list[Sample]:
    samples = []
    for i in range(n):
        memory_id = _learn(memory, "bench-one", f"one memory to forget, number {i} {uuid.uuid4().hex}", signer)
        samples.append(_forget(memory, pb.ForgetRequest(tenant=TENANT, memory_id=memory_id)))
    return samples


def user_sample(replicas: list[Any], memories: int, signer: DecisionSigner) -> Sample:
    """Seed one user through both replicas (the seeding is the slow part), then forget the user."""
    user = f"bench-user-{uuid.uuid4().hex[:8]}"

    def learn(i: int) -> str:
        return _learn(replicas[i % len(replicas)], user, f"fact {i} of {user}: {uuid.uuid4().hex}", signer)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(learn, range(memories)))
    return _forget(replicas[0], pb.ForgetRequest(tenant=TENANT, user=user))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def run(quick: bool) -> list[dict[str, Any]]:
    """Rows of (figure, memloop, baseline, ratio, goal, met) for run_all."""
    with _stack() as stack:
        # the bench plays the loop (ApplyLearning, signed with the stack's policy key) and the operator
        token = stack.token(TENANT, roles=("reader", "writer", "admin", "service"), subject="bench")
        signer = load_signer(str(stack.policy_signing_key_file))
        channels: list[grpc.Channel] = [sync_channel(stack.services[n].target, token) for n in ("memory", "memory-1")]
        replicas = [pb_grpc.MemoryServiceStub(channel) for channel in channels]
        try:
            one = one_memory_samples(replicas[0], 30 if quick else 200, signer)
            users = [user_sample(replicas, USER_MEMORIES, signer) for _ in range(1 if quick else 3)]
        finally:
            for channel in channels:
                channel.close()
    rows: list[dict[str, Any]] = []
    for q in ("p50", "p99"):
        done = _pct([s.to_done_s for s in one], float(q[1:]))
        ack = _pct([s.acknowledged_s for s in one], float(q[1:]))
        rows.append(
            {
                "figure": f"one memory: acknowledged -> every location done, {q} s, {len(one)} deletions, "
                "2 replicas (baseline: the acknowledgement itself)",
                "memloop": round(done, 4),
                "baseline": round(ack, 4),
                "ratio": round(done / ack, 2) if ack else None,
                "goal": f"< {ONE_MEMORY_GOAL_S[q]:g} s",
                "met": done < ONE_MEMORY_GOAL_S[q],
            }
        )
    done_user = [s.to_done_s for s in users]
    ack_user = [s.acknowledged_s for s in users]
    for q in ("p50", "p99"):
        done, ack = _pct(done_user, float(q[1:])), _pct(ack_user, float(q[1:]))
        rows.append(
            {
                "figure": f"user with {USER_MEMORIES:,} memories (one event each): acknowledged -> every location "
                f"done, {q} s, {len(users)} users (baseline: the acknowledgement itself)",
                "memloop": round(done, 2),
                "baseline": round(ack, 2),
                "ratio": round(done / ack, 2) if ack else None,
                "goal": f"< {USER_GOAL_S:g} s",
                "met": done < USER_GOAL_S,
            }
        )
    if len(one) > 1:
        rows.append(
            {
                "figure": "one memory: spread of acknowledged -> done, stdev s",
                "memloop": round(statistics.stdev(s.to_done_s for s in one), 4),
                "baseline": None,
                "ratio": None,
                "goal": "reported",
                "met": None,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 single deletions and one 10,000-memory user")
    rows = run(parser.parse_args().quick)
    for row in rows:
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}"
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        baseline = "" if row["baseline"] is None else row["baseline"]
        figures = f"memloop {row['memloop']}  baseline {baseline}  ratio {ratio}  goal {row['goal']}  met {met}"
        print(f"{row['figure']}\n    {figures}")


if __name__ == "__main__":
    main()
