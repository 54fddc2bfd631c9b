"""CPU per decision of policy's signature and memory's check: one signature per decision against one
per batch (`services/common/decision_batch.py`), alternating rounds in one run.

Not a test: prints figures. Why a micro-benchmark next to `bench_pipeline_ab`: on the shared 2-core
machine the whole-stack CPU per event moves by ±15 % between rounds, more than this change is
worth to the total; the thread CPU time of exactly the signing and verifying code is not moved by
other load. Batches of `--batch` decisions, each decision for its own user and event, as a
BatchEvaluate of the worker's makes them; verification with a fresh verifier per batch (nothing
remembered from an earlier batch).

    .venv/bin/python -m bench.bench_decision_signing --batch 24 --rounds 5
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from bench._harness import load_average, median
from services.common.decision_signing import DecisionSigner, generate_private_key_pem, load_signer
from services.common.vocabulary import Candidate, Decision, MemoryType, Origin, Outcome, Reason, Sensitivity

Item = tuple[Decision, str, str, str]


def _items(count: int) -> list[Item]:
    out: list[Item] = []
    for n in range(count):
        candidate = Candidate(
            candidate_key=f"k{n:04d}",
            type=MemoryType.PREFERENCE,
            origin=Origin.OWNER,
            sensitivity=Sensitivity.NORMAL,
            confidence=0.9,
            text=f"Prefers meetings after {n % 12}:00 on weekdays",
            event_id=f"evt-{n:04d}",
            trace_id="t" * 32,
            intent_key="meeting_time_window",
        )
        decision = Decision(candidate, Outcome.STORE, "policy-1", (Reason("ELIGIBLE", "ok"),))
        out.append((decision, "acme", f"user-{n // 3}", candidate.event_id))
    return out


def _one_each(signer: DecisionSigner, items: list[Item]) -> list[bytes]:
    return [signer.sign(d, tenant=t, user=u, event_id=e) for d, t, u, e in items]


def _round(signer: DecisionSigner, items: list[Item], batches: int, batched: bool) -> tuple[float, float]:
    """(sign, verify) thread CPU µs per decision over `batches` batches."""
    sign_ns = verify_ns = 0
    for _ in range(batches):
        began = time.thread_time_ns()
        signatures = signer.sign_many(items) if batched else _one_each(signer, items)
        sign_ns += time.thread_time_ns() - began
        verifier = signer.verifier()
        began = time.thread_time_ns()
        for (decision, tenant, user, event_id), signature in zip(items, signatures, strict=True):
            ok = verifier.verify(replace(decision, signature=signature), tenant=tenant, user=user, event_id=event_id)
            assert ok
        verify_ns += time.thread_time_ns() - began
    count = batches * len(items)
    return sign_ns / count / 1000, verify_ns / count / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--batch", type=int, default=24, help="decisions per BatchEvaluate")
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    signer = load_signer(generate_private_key_pem().decode())
    items = _items(args.batch)
    results: dict[str, list[tuple[float, float]]] = {"one each": [], "per batch": []}
    print(f"decision signing, batches of {args.batch} (load {load_average()})")
    for i in range(args.rounds):
        order = [False, True] if i % 2 == 0 else [True, False]
        for batched in order:
            name = "per batch" if batched else "one each"
            results[name].append(_round(signer, items, args.batches, batched))
    print(f"medians of {args.rounds} rounds, thread CPU µs per decision (load {load_average()}):")
    print(f"{'':>10} {'one each':>9} {'per batch':>9} {'ratio':>6}")
    for index, what in enumerate(("sign", "verify")):
        one = median([r[index] for r in results["one each"]])
        batch = median([r[index] for r in results["per batch"]])
        print(f"{what:>10} {one:9.1f} {batch:9.1f} {batch / one:6.2f}")


if __name__ == "__main__":
    main()
