"""Memory's MiniLM embedder in int8 against fp32 (the model as shipped), on the project's own texts, same run.

What `MEMLOOP_MEMORY_ENCODER_PRECISION` changes, measured before choosing its default:

- **recall@10** of int8 search (int8 query against int8 vectors of the corpus) against fp32 exact
  search (fp32 query, fp32 vectors) over the same corpus, exact inner product on both sides (the
  index's own approximation is the same at either precision and measured by `bench_retrieval`).
  Tie-aware as the index calibration is: an int8 hit counts when its fp32 score reaches the fp32
  tenth-best. Stored texts are embedded in calls of 64 (ApplyLearning, a rebuild), each query alone
  (SearchMemories); the same figure with the queries in calls of 64 is printed beside it, because
  int8 rows depend on their call: dynamic quantisation scales the activations per call, over every
  text of the batch and its padding, so one text's int8 row moves with its neighbours (fp32's does
  not beyond float rounding; the bench prints both). Queries are texts the corpus does not hold, so
  no query finds itself. Corpora:

  - *alice*: the memories an owner like Alice has stored: the extraction set's `store` sentences
    (`tests/data/extraction_sentences.jsonl`, Alice's mail) and Alice's mailbox
    (`tests/fixtures/alice.json`); queries are the set's other sentences (questions and chatter
    on the same topics) and the fixture's retrieval queries;
  - *priya*: `bench_consolidation.synthetic_user` (the Priya corpus' sentence shapes over larger
    vocabularies); queries are Priya's own session memories (`tests/fixtures/priya_sessions.json`)
    and fresh synthetic sentences;
  - *word bags*: `bench_search`'s memories (six topic words and a number), fresh draws as queries.

- **cosine** of each corpus text's int8 vector with its fp32 vector (min, 1st percentile, mean).
- **the conflict threshold** (`Tuning.conflict_similarity`, MEMLOOP_CONFLICT_SIMILARITY, the one
  similarity cut-off memory has: FindConflicts): pairs classified "close" at fp32 and not at int8
  or the reverse. Fixture pairs: every pair of Priya's memories and of Alice's mailbox sentences
  (the restatements, the corrections, the 10:00 → 09:00 preference); and every pair of the
  extraction set's `store` sentences that share an intent (the pairs a conflict is about: "I'm
  vegan." and "I'm pescatarian."). Consolidation's similarity is token-based and supersession goes
  by intent key, so neither reads a vector.
- **speed**: CPU ms per text, int8 against fp32, batched (the corpus in calls of 64, as ApplyLearning
  and a rebuild embed) and single (one query per call, as SearchMemories embeds), one torch thread
  (MEMLOOP_LEARNING_THREADS' default), rounds alternating the two precisions, medians reported.

    .venv/bin/python -m bench.bench_memory_encoder [--quick] [--other int8|bf16]

`--other bf16` measures bfloat16 autocast (`services/common/encoder_precision.py`) the same way,
in place of int8.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench._harness import Row, load_average, row
from services.memory.core.service.ports import Tuning
from tests.fixtures import load_fixture

Matrix = npt.NDArray[np.float32]
OTHER = "int8"
"""The precision measured against fp32: `int8` (the default) or `bf16` (`--other`)."""
PRECISIONS = ("fp32", OTHER)
K = 10
RECALL_GOAL = 0.95
_TIE = 1e-5
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
EXTRACTION = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_sentences.jsonl"


@dataclass(frozen=True)
class Corpus:
    name: str
    texts: list[str]
    queries: list[str]


def _unique(texts: Iterable[str], leaving_out: Iterable[str] = ()) -> list[str]:
    gone = set(leaving_out)
    return [t for t in dict.fromkeys(t.strip() for t in texts) if t and t not in gone]


def _extraction_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXTRACTION.read_text(encoding="utf-8").splitlines() if line.strip()]


def alice_mailbox() -> list[str]:
    """The sentences of Alice's fixture: bodies, replies and tool outcomes, what her memories are made of."""
    fixture = load_fixture("alice.json")
    parts: list[str] = []
    for request in fixture["requests"]:
        parts += _SENTENCE.split(request["content"]["body"])
        parts += _SENTENCE.split(request.get("reply", ""))
        parts += [outcome["summary"] for outcome in request.get("tool_outcomes", [])]
    return _unique(p for p in parts if len(p.split()) >= 3)


def alice_queries() -> list[str]:
    fixture = load_fixture("alice.json")
    return [r["expect"]["retrieval_for"] for r in fixture["requests"] if "retrieval_for" in r.get("expect", {})]


def priya_memories() -> list[str]:
    fixture = load_fixture("priya_sessions.json")
    return _unique(text for session in fixture["sessions"] for text in session["memories"])


def corpora(quick: bool) -> list[Corpus]:
    from bench.bench_consolidation import synthetic_user
    from bench.bench_search import _text

    rows = _extraction_rows()
    stored = _unique([r["text"] for r in rows if r["expected"] == "store"] + alice_mailbox())
    alice = Corpus("alice", stored, _unique(alice_queries() + [r["text"] for r in rows], leaving_out=stored))
    size = 600 if quick else 3000
    synthetic = _unique(record.text for record in synthetic_user(size))
    fresh = _unique((record.text for record in synthetic_user(size // 5, seed=8)), leaving_out=synthetic)
    priya = Corpus("priya", synthetic, _unique(priya_memories() + fresh, leaving_out=synthetic))
    rng = np.random.default_rng(11)
    bags = _unique(_text(rng) for _ in range(size))
    words = Corpus("word bags", bags, _unique((_text(rng) for _ in range(size // 10)), leaving_out=bags))
    if quick:
        alice = Corpus(alice.name, alice.texts, alice.queries[::3])
    return [alice, priya, words]


def recall_at_k(fp32: tuple[Matrix, Matrix], int8: tuple[Matrix, Matrix]) -> list[float]:
    """Per query: the share of int8's top K that fp32 exact search ranks in its top K (ties count)."""
    (docs32, queries32), (docs8, queries8) = fp32, int8
    exact = queries32 @ docs32.T
    approx = queries8 @ docs8.T
    k = min(K, docs32.shape[0])
    out = []
    for q in range(exact.shape[0]):
        kth = np.partition(-exact[q], k - 1)[k - 1] * -1
        found = np.argpartition(-approx[q], k - 1)[:k]
        out.append(float(np.sum(exact[q, found] >= kth - _TIE)) / k)
    return out


def threshold_flips(fp32: Matrix, int8: Matrix, pairs: Sequence[tuple[int, int]], cut: float) -> dict[str, Any]:
    """How many pairs change side of `cut` between fp32 and int8, and how near the cut fp32 puts any."""
    if not pairs:
        return {"pairs": 0, "close_fp32": 0, "close_int8": 0, "flips": [], "within_0.02": 0, "max_shift": 0.0}
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    s32 = np.sum(fp32[a] * fp32[b], axis=1)
    s8 = np.sum(int8[a] * int8[b], axis=1)
    flipped = np.nonzero((s32 >= cut) != (s8 >= cut))[0]
    return {
        "pairs": len(pairs),
        "close_fp32": int(np.sum(s32 >= cut)),
        "close_int8": int(np.sum(s8 >= cut)),
        "flips": [(int(a[i]), int(b[i]), float(s32[i]), float(s8[i])) for i in flipped],
        "within_0.02": int(np.sum(np.abs(s32 - cut) < 0.02)),
        "max_shift": float(np.max(np.abs(s32 - s8))),
    }


def _cpu_ms_per_text(embedder: Any, texts: Sequence[str], batch: int) -> float:
    started = time.process_time()
    for i in range(0, len(texts), batch):
        embedder.embed(texts[i : i + batch], kind="query" if batch == 1 else "document")
    return (time.process_time() - started) * 1000 / len(texts)


def _speed(embedders: dict[str, Any], texts: Sequence[str], batch: int, rounds: int) -> dict[str, float]:
    for p in PRECISIONS:
        _cpu_ms_per_text(embedders[p], texts[:8], batch)  # warm-up
    times: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for r in range(rounds):
        for p in PRECISIONS if r % 2 == 0 else tuple(reversed(PRECISIONS)):
            times[p].append(_cpu_ms_per_text(embedders[p], texts, batch))
    print(f"    calls of {batch}: CPU ms per text fp32 {_fmt(times['fp32'])} {OTHER} {_fmt(times[OTHER])}", flush=True)
    return {p: statistics.median(times[p]) for p in PRECISIONS}


def _fmt(values: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


def _quality(embedders: dict[str, Any], corpus_list: Sequence[Corpus]) -> tuple[list[Row], bool]:
    rows: list[Row] = []
    worst_recall = 1.0
    for corpus in corpus_list:
        vectors = {p: (embedders[p].embed(corpus.texts), _alone(embedders[p], corpus.queries)) for p in PRECISIONS}
        recalls = recall_at_k(vectors["fp32"], vectors[OTHER])
        batched_queries = {p: embedders[p].embed(corpus.queries, kind="query") for p in PRECISIONS}
        batched = statistics.fmean(
            recall_at_k((vectors["fp32"][0], batched_queries["fp32"]), (vectors[OTHER][0], batched_queries[OTHER]))
        )
        cosines = np.sum(vectors["fp32"][0] * vectors[OTHER][0], axis=1)
        mean = statistics.fmean(recalls)
        worst_recall = min(worst_recall, mean)
        below = sum(r < 0.8 for r in recalls)
        drift = {p: np.sum(vectors[p][1] * batched_queries[p], axis=1) for p in PRECISIONS}
        print(
            f"  {corpus.name}: {len(corpus.texts)} texts, {len(corpus.queries)} queries; recall@{K} {OTHER} vs fp32 "
            f"exact {mean:.4f} (min {min(recalls):.1f}, {below} queries below 0.8; {batched:.4f} with the queries "
            f"embedded in calls of 64 instead of alone); cosine {OTHER}·fp32 min {cosines.min():.4f} p1 "
            f"{np.percentile(cosines, 1):.4f} mean {cosines.mean():.4f}; one text alone vs in a call of 64, "
            f"cosine min/mean fp32 {drift['fp32'].min():.4f}/{drift['fp32'].mean():.4f} {OTHER} "
            f"{drift[OTHER].min():.4f}/{drift[OTHER].mean():.4f}",
            flush=True,
        )
        rows.append(
            row(
                f"memory embedder recall@{K}, {OTHER} search vs fp32 exact, {corpus.name} corpus "
                f"({len(corpus.texts)} texts, {len(corpus.queries)} queries)",
                round(mean, 4),
                1.0,
                round(mean, 4),
                f">= {RECALL_GOAL}",
                mean >= RECALL_GOAL,
            )
        )
        rows.append(
            row(
                f"memory embedder cosine of {OTHER} and fp32 vectors of one text, {corpus.name} corpus (min / mean)",
                round(float(cosines.min()), 4),
                round(float(cosines.mean()), 4),
                None,
            )
        )
        rows.append(
            row(
                f"memory embedder cosine of one text's vector alone and in a call of 64, {OTHER} (baseline fp32), "
                f"{corpus.name} queries (min)",
                round(float(drift[OTHER].min()), 4),
                round(float(drift["fp32"].min()), 4),
                None,
            )
        )
    return rows, worst_recall >= RECALL_GOAL


def _alone(embedder: Any, texts: Sequence[str]) -> Matrix:
    """One call per text, as SearchMemories embeds its query."""
    return np.concatenate([embedder.embed([text], kind="query") for text in texts])


def _pair_sets() -> list[tuple[str, list[str], list[tuple[int, int]]]]:
    priya = priya_memories()
    mailbox = alice_mailbox()
    stored = [r for r in _extraction_rows() if r["expected"] == "store"]
    texts = _unique(r["text"] for r in stored)
    intent = {r["text"].strip(): r["intent_key"] for r in stored}
    same_intent = [
        (i, j)
        for i, j in itertools.combinations(range(len(texts)), 2)
        if intent.get(texts[i]) and intent.get(texts[i]) == intent.get(texts[j])
    ]
    return [
        ("Priya's memories, every pair", priya, list(itertools.combinations(range(len(priya)), 2))),
        ("Alice's mailbox sentences, every pair", mailbox, list(itertools.combinations(range(len(mailbox)), 2))),
        ("extraction set's stored sentences, pairs sharing an intent", texts, same_intent),
    ]


def _thresholds(embedders: dict[str, Any]) -> tuple[list[Row], bool]:
    cut = Tuning().conflict_similarity
    rows: list[Row] = []
    fixtures_same = True
    print(f"  conflict threshold {cut} (FindConflicts; MEMLOOP_CONFLICT_SIMILARITY):", flush=True)
    for name, texts, pairs in _pair_sets():
        fp32, other = embedders["fp32"].embed(texts), embedders[OTHER].embed(texts)
        found = threshold_flips(fp32, other, pairs, cut)
        flips = found["flips"]
        if not name.startswith("extraction"):
            fixtures_same = fixtures_same and not flips
        print(
            f"    {name}: {found['pairs']} pairs, close at fp32 {found['close_fp32']}, at {OTHER} "
            f"{found['close_int8']}, changed side {len(flips)}; fp32 within 0.02 of the cut "
            f"{found['within_0.02']}; largest |fp32 - {OTHER}| similarity {found['max_shift']:.4f}",
            flush=True,
        )
        for i, j, s32, s8 in flips if not name.startswith("extraction") else flips[:5]:
            print(f"      {texts[i]!r} ~ {texts[j]!r}: fp32 {s32:.4f}, {OTHER} {s8:.4f}")
        rows.append(
            row(
                f"pairs on the other side of the conflict threshold {cut} at {OTHER}, {name} ({found['pairs']} pairs, "
                f"{found['close_fp32']} close at fp32)",
                len(flips),
                0,
                None,
                "0 for the fixtures' pairs" if not name.startswith("extraction") else "reported",
                (not flips) if not name.startswith("extraction") else None,
            )
        )
    return rows, fixtures_same


def run(quick: bool, other: str = "int8") -> list[Row]:
    global OTHER, PRECISIONS  # a bench script's one switch, read by every figure's label
    OTHER, PRECISIONS = other, ("fp32", other)
    from services.common.priority import bound_math_threads
    from services.memory.core.adapters.embedders import MiniLmEmbedder

    bound_math_threads(1)  # MEMLOOP_LEARNING_THREADS' default, before torch loads and after, as bootstrap
    embedders = {p: MiniLmEmbedder(precision=p) for p in PRECISIONS}
    bound_math_threads(1)
    print(f"memory encoder bench (load average {load_average()}):", flush=True)
    corpus_list = corpora(quick)
    quality, recall_met = _quality(embedders, corpus_list)
    thresholds, thresholds_same = _thresholds(embedders)
    rounds = 3 if quick else 5
    texts = corpus_list[0].texts[: 256 if quick else 768]
    queries = corpus_list[0].queries[: 64 if quick else 200]
    print(f"  speed, {len(texts)} stored texts in calls of 64, {len(queries)} queries one per call:", flush=True)
    batched = _speed(embedders, texts, 64, rounds)
    single = _speed(embedders, queries, 1, rounds)
    speed = [
        row(
            f"memory embedder CPU ms per text, {what}: {OTHER} vs fp32 (median of {rounds} alternating rounds)",
            round(measured[OTHER], 2),
            round(measured["fp32"], 2),
            round(measured[OTHER] / measured["fp32"], 2),
        )
        for what, measured in (("calls of 64 stored texts", batched), ("one query per call", single))
    ]
    verdict = OTHER if recall_met and thresholds_same else "fp32"
    print(
        f"  default by the rule (recall@{K} >= {RECALL_GOAL} on every corpus and the fixtures' pairs on the same "
        f"side of the threshold): {verdict} (load average {load_average()})",
        flush=True,
    )
    return quality + thresholds + speed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller corpora and fewer rounds")
    parser.add_argument("--other", choices=("int8", "bf16"), default="int8", help="the precision measured against fp32")
    args = parser.parse_args()
    for measured in run(args.quick, args.other):
        print(
            f"{measured['figure']}: {measured['memloop']} (baseline {measured['baseline']}, ratio {measured['ratio']})"
        )


if __name__ == "__main__":
    main()
