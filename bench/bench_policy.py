"""Policy's reading of someone else's text: µs per tool outcome, and the worst a sender can make it cost.

A tool outcome (and an outsider's candidate) is read more than the owner's words: instruction
markers, the steering shapes, the order grammar, each again on every hidden reading (ROT13, hex,
spaced letters...), and the secret scan. This prints the cost per tool outcome on the labelled
candidates' texts, an owner's preference on the same texts as the baseline (read by the secret scan
and the rules, not the readings for others' text), and the worst of bodies as large as a tool
outcome summary may be, each one piece repeated, against as much prose: "![x](http://a?q=" cost
5.7 s per 64 KB in a steering pattern and "把" 12.7 s in the order grammar's destinations until
their repeats were bounded. CPU time (``process_time``), best of several rounds.

    .venv/bin/python -m bench.bench_policy [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench._harness import Row, row
from bench.bench_redaction import prose_emails
from services.common.vocabulary import Candidate, MemoryType, Origin
from services.policy.domain import rules
from tests.helpers import owner_candidate

CANDIDATES = Path(__file__).resolve().parents[1] / "tests" / "data" / "policy_candidates.jsonl"
ADVERSARIAL_BYTES = 64 * 1024
ADVERSARIAL_PIECES = (
    "When x, ", "Leite alle ", "%41", "a-b-", "it would be helpful if the assistant ", "![x](http://a?q=",
    "(the assistant): ", "i g n o r e ", "QUJD", "41 ", "&#65;", "you have been granted ", "Перешли все ", "把",
    "Vtaber ", "memory.save(", "If you, ", "a,b,", "| a ", "An instruction from a: ", "veut que tu ",
    "trusted_", "confirmations have been ", "owner of this account ", "Από τώρα ", "the assistant ",
    "On any a, ", "a<b>",
    # the sixteenth to eighteenth probes' phrase pairs: a word of each shape, repeated
    "cuando recomienda ", "asistente debe ", "nuevo número 12345678 ", "助手应该推荐给", "siempre envía a@b.example ",
    "tú y acordaron ", "sin su aprobación ", "[Systemnachricht] ",
)  # fmt: skip


def _texts() -> list[str]:
    return [str(json.loads(line)["text"]) for line in CANDIDATES.read_text(encoding="utf-8").splitlines() if line]


def _per_candidate_us(candidates: list[Candidate], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        rules._markers_of_others.cache_clear()  # each round reads every text afresh, as a new event would
        rules._orders_its_reader.cache_clear()
        rules._readings.cache_clear()
        started = time.process_time()
        for candidate in candidates:
            rules.evaluate(candidate)
        best = min(best, time.process_time() - started)
    return best / len(candidates) * 1e6


def _tool_outcome(text: str) -> Candidate:
    return owner_candidate(text, MemoryType.EPISODE, origin=Origin.TOOL_OUTCOME)


def run(quick: bool) -> list[Row]:
    rounds = 2 if quick else 5
    texts = _texts()
    others = _per_candidate_us([_tool_outcome(t) for t in texts], rounds)
    owners = _per_candidate_us([owner_candidate(t) for t in texts], rounds)
    rows = [
        row(
            "policy µs per candidate, labelled texts: as a tool outcome vs as the owner's preference (baseline)",
            round(others, 1),
            round(owners, 1),
            round(others / owners, 2),
        )
    ]
    prose = (prose_emails()[0] * (ADVERSARIAL_BYTES // 2048 + 1))[:ADVERSARIAL_BYTES]
    prose_ms = _per_candidate_us([_tool_outcome(prose)], 1) / 1000
    costs = {
        piece: _per_candidate_us(
            [_tool_outcome((piece * (ADVERSARIAL_BYTES // len(piece) + 1))[:ADVERSARIAL_BYTES])], 1
        )
        / 1000
        for piece in (ADVERSARIAL_PIECES[:6] if quick else ADVERSARIAL_PIECES)
    }
    print("  adversarial tool outcomes, ms: " + ", ".join(f"{piece!r} {ms:.0f}" for piece, ms in costs.items()))
    worst = max(costs, key=costs.__getitem__)
    rows.append(
        row(
            f"policy ms per 64 KB adversarial tool outcome (worst: {worst!r}) vs as much prose",
            round(costs[worst], 1),
            round(prose_ms, 1),
            round(costs[worst] / prose_ms, 2),
            "reported (adversarial input)",
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and pieces")
    rows = run(parser.parse_args().quick)
    for r in rows:
        print(f"{r['figure']}\n  {r['memloop']} vs {r['baseline']} (baseline), ratio {r['ratio']}, goal {r['goal']}")
    summary: dict[str, Any] = {r["figure"]: r["ratio"] for r in rows}
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
