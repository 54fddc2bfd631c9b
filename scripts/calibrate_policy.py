"""Calibrate the memory policy's confidence thresholds on the labelled candidate set.

Runs ``services.policy.domain.rules.evaluate`` over ``tests/data/policy_candidates.jsonl`` for a
sweep of thresholds, prints precision and recall per decision (STORE precision first) and writes
``tests/data/calibration_report.md`` with the figures, the chosen thresholds and why.

Selection rule, precision first:

1. ``store_min_confidence``: among thresholds that keep STORE precision at 1.0 on the candidate set
   and at least 0.98 on the extraction set (the TRAIN split of ``tests/data/extraction_sentences.jsonl``
   read by the learned extractor, so the report's held-out split stays unseen), those with the highest
   STORE recall (summed over both sets) form a plateau; take its midpoint, so neither edge's noise decides.
2. ``supersede_min_confidence``: the same rule on the owner same-intent updates only, searched at
   or above the store threshold.

Deterministic: same data, same report. Run: ``make calibration-report`` (``--no-extraction`` skips the
learned extractor and its model).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from services.common.vocabulary import (  # noqa: E402 - after the path fix, for running as a script
    Candidate,
    Decision,
    MemoryType,
    Origin,
    Outcome,
    Sensitivity,
    candidate_key,
)
from services.policy.domain.rules import (  # noqa: E402
    DEFAULT_THRESHOLDS,
    POLICY_VERSION,
    Conflict,
    PolicyThresholds,
    evaluate,
)
from services.worker.domain.extraction import EmailContent, ExtractionInput, RuleBasedExtractor  # noqa: E402

DATA = ROOT / "tests" / "data" / "policy_candidates.jsonl"
EXTRACTION = ROOT / "tests" / "data" / "extraction_sentences.jsonl"
EXTRACTION_MIN_PRECISION = 0.98
REPORT = ROOT / "tests" / "data" / "calibration_report.md"
GRID = tuple(round(0.5 + 0.01 * step, 2) for step in range(50))  # 0.50 .. 0.99
OUTCOMES = (Outcome.STORE, Outcome.REVIEW, Outcome.REJECT)


@dataclass(frozen=True)
class Labelled:
    """One labelled row: the candidate, its conflicts and the decision a careful human expects."""

    id: str
    category: str
    form: str
    candidate: Candidate
    conflicts: tuple[Conflict, ...]
    expected: Outcome


def load(path: Path = DATA) -> list[Labelled]:
    rows: list[Labelled] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        raw: dict[str, Any] = json.loads(line)
        memory_type = MemoryType(raw["type"])
        candidate = Candidate(
            candidate_key=candidate_key("acme", "alice", memory_type, raw["text"]),
            type=memory_type,
            origin=Origin(raw["origin"]),
            sensitivity=Sensitivity(raw["sensitivity"]),
            confidence=float(raw["confidence"]),
            text=raw["text"],
            event_id=f"evt-{raw['id']}",
            trace_id="0" * 32,
            intent_key=raw["intent_key"],
        )
        conflicts = tuple(
            Conflict(c["memory_id"], c["intent_key"], c["text"], MemoryType(c["type"])) for c in raw["conflicts"]
        )
        rows.append(Labelled(raw["id"], raw["category"], raw["form"], candidate, conflicts, Outcome(raw["expected"])))
    return rows


@dataclass(frozen=True)
class Scores:
    """Precision and recall per outcome, and the decisions they came from."""

    thresholds: PolicyThresholds
    decisions: tuple[Decision, ...]
    rows: tuple[Labelled, ...]

    def counts(self, outcome: Outcome) -> tuple[int, int, int]:
        """True positives, predicted, expected."""
        pairs = [(row.expected, decision.outcome) for row, decision in zip(self.rows, self.decisions, strict=True)]
        tp = sum(1 for e, g in pairs if e is outcome and g is outcome)
        return tp, sum(1 for _, g in pairs if g is outcome), sum(1 for e, _ in pairs if e is outcome)

    def precision(self, outcome: Outcome) -> float:
        tp, predicted, _ = self.counts(outcome)
        return tp / predicted if predicted else 1.0

    def recall(self, outcome: Outcome) -> float:
        tp, _, expected = self.counts(outcome)
        return tp / expected if expected else 1.0

    def mistakes(self) -> list[tuple[Labelled, Decision]]:
        pairs = zip(self.rows, self.decisions, strict=True)
        return [(row, decision) for row, decision in pairs if row.expected is not decision.outcome]


def score(rows: Sequence[Labelled], thresholds: PolicyThresholds) -> Scores:
    decisions = tuple(evaluate(row.candidate, row.conflicts, None, thresholds) for row in rows)
    return Scores(thresholds, decisions, tuple(rows))


def _plateau_midpoint(values: Sequence[float], recalls: Sequence[float], feasible_at: Sequence[bool]) -> float:
    feasible = [(v, r) for v, r, ok in zip(values, recalls, feasible_at, strict=True) if ok]
    if not feasible:
        raise SystemExit(
            "no threshold reaches the STORE precision floor: fix the rules or the labels, not the threshold"
        )
    best = max(r for _, r in feasible)
    plateau = [v for v, r in feasible if r == best]
    return round((min(plateau) + max(plateau)) / 2, 2)


@dataclass(frozen=True)
class Extracted:
    """One sentence of the extraction set: what the loop should do with it, and the confidences of
    its candidates that policy would store at a threshold of 0 (only confidence then decides)."""

    expected: str
    storable: tuple[float, ...]

    def stored_at(self, threshold: float) -> bool:
        return any(confidence >= threshold for confidence in self.storable)


def extract_set(path: Path = EXTRACTION, split: str = "train") -> list[Extracted]:
    """Each sentence of ``split`` as an e-mail body, read by the learned extractor (MiniLM + the heads)."""
    from services.common.text_folding import fold_for_matching
    from services.worker.adapters.sentence_model import MiniLmSentenceEncoder, PreparedEncoder, load_heads
    from services.worker.domain.learned_extraction import LearnedExtractor

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [row for row in rows if row["split"] == split]
    # fp32 rows, embedded ahead in one batch (they do not depend on their batch), as the heads were trained
    encoder = PreparedEncoder(MiniLmSentenceEncoder(precision="fp32"), [fold_for_matching(row["text"]) for row in rows])
    extractor, items, floor = LearnedExtractor(encoder, load_heads()), [], PolicyThresholds(0.0, 0.0)
    for index, row in enumerate(rows):
        owner = row["author"] == "owner"
        email = EmailContent("[EMAIL@a.example]", "[EMAIL@a.example]", "", row["text"])
        event = ExtractionInput(f"x{index}", "0" * 32, "acme", f"u{index}", "assistant.instruction", (), email, owner)
        candidates = extractor.extract(event)
        storable = [c.confidence for c in candidates if evaluate(c, (), None, floor).outcome is Outcome.STORE]
        items.append(Extracted(row["expected"], tuple(storable)))
    return items


def extraction_scores(items: Sequence[Extracted], thresholds: PolicyThresholds) -> tuple[float, float, int]:
    """STORE precision, recall and count over sentences (stored: any candidate of it stored)."""
    stored = [item for item in items if item.stored_at(thresholds.store_min_confidence)]
    correct = sum(1 for item in stored if item.expected == "store")
    expected = sum(1 for item in items if item.expected == "store")
    return (correct / len(stored) if stored else 1.0), (correct / expected if expected else 1.0), len(stored)


def choose(
    rows: Sequence[Labelled], extracted: Sequence[Extracted] = ()
) -> tuple[PolicyThresholds, list[Scores], list[Scores]]:
    store_sweep = [score(rows, PolicyThresholds(t, t)) for t in GRID]
    recalls = [s.recall(Outcome.STORE) for s in store_sweep]
    feasible = [s.precision(Outcome.STORE) == 1.0 for s in store_sweep]
    if extracted:
        learned = [extraction_scores(extracted, PolicyThresholds(t, t)) for t in GRID]
        recalls = [r + recall for r, (_, recall, _) in zip(recalls, learned, strict=True)]
        feasible = [ok and p >= EXTRACTION_MIN_PRECISION for ok, (p, _, _) in zip(feasible, learned, strict=True)]
    store_t = _plateau_midpoint(GRID, recalls, feasible)
    updates = [row for row in rows if row.category.startswith("owner_supersede")]
    grid = [t for t in GRID if t >= store_t]
    supersede_sweep = [score(updates, PolicyThresholds(store_t, s)) for s in grid]
    supersede_t = _plateau_midpoint(
        grid,
        [s.recall(Outcome.STORE) for s in supersede_sweep],
        [s.precision(Outcome.STORE) == 1.0 for s in supersede_sweep],
    )
    return PolicyThresholds(store_t, supersede_t), store_sweep, supersede_sweep


def end_to_end(rows: Sequence[Labelled], thresholds: PolicyThresholds) -> list[tuple[Labelled, str]]:
    """Feed each e-mail text of the set (no conflicts) to the rule-based extractor, then to policy.

    The row's verdict is the strictest decision over what was extracted, or "none" when the
    extractor proposed nothing (a missed memory, never a stored one).
    """
    extractor, results = RuleBasedExtractor(), []
    severity = {Outcome.STORE: 0, Outcome.REVIEW: 1, Outcome.REJECT: 2}
    for row in rows:
        if row.conflicts or row.candidate.origin not in (Origin.OWNER, Origin.EXTERNAL_EMAIL):
            continue
        email = EmailContent("[EMAIL@a.example]", "[EMAIL@a.example]", "", row.candidate.text)
        event = ExtractionInput(
            row.id, "0" * 32, "acme", "alice", "assistant.instruction", (), email, row.candidate.origin is Origin.OWNER
        )
        outcomes = [evaluate(c, (), None, thresholds).outcome for c in extractor.extract(event)]
        results.append((row, max(outcomes, key=severity.__getitem__).value if outcomes else "none"))
    return results


def _end_to_end_figures(results: Sequence[tuple[Labelled, str]]) -> list[str]:
    """A confusion matrix (expected rows, verdict columns) and STORE precision and recall."""
    verdicts = ("store", "review", "reject", "none")
    lines = ["| expected \\ verdict | " + " | ".join(verdicts) + " |", "|---|---|---|---|---|"]
    for outcome in OUTCOMES:
        cells = [sum(1 for row, got in results if row.expected is outcome and got == v) for v in verdicts]
        lines.append(f"| {outcome.value} | " + " | ".join(str(cell) for cell in cells) + " |")
    stored = [row for row, got in results if got == "store"]
    correct = sum(1 for row in stored if row.expected is Outcome.STORE)
    expected = sum(1 for row, _ in results if row.expected is Outcome.STORE)
    precision = correct / len(stored) if stored else 1.0
    lines += ["", f"STORE precision {precision:.3f}, recall {correct / expected if expected else 1.0:.3f}."]
    return lines


def _figures(scores: Scores) -> list[str]:
    lines = ["| decision | precision | recall | predicted | expected |", "|---|---|---|---|---|"]
    for outcome in OUTCOMES:
        _, predicted, expected = scores.counts(outcome)
        p, r = scores.precision(outcome), scores.recall(outcome)
        lines.append(f"| {outcome.value.upper()} | {p:.3f} | {r:.3f} | {predicted} | {expected} |")
    return lines


def _extraction_section(extracted: Sequence[Extracted], chosen: PolicyThresholds) -> list[str]:
    if not extracted:
        return []
    out = [
        "",
        "## The learned extractor on the extraction set (train split)",
        "",
        f"The {len(extracted)} train-split sentences of `tests/data/extraction_sentences.jsonl` (owner and outsider",
        "text; statements, paraphrases, negations, hedges, questions, sarcasm, quoted third parties, instructions),",
        "each an e-mail body read by the learned extractor (MiniLM mode), every candidate decided without conflicts.",
        "It reports a clear reading (storable probability at least 0.5) at 0.87-0.96 on the rules' scale, a hedged",
        "one 0.25 lower, an unsure one at its probability: the threshold separates them, and every REVIEW says why.",
        "A sentence counts as stored when any of its candidates is. Held-out figures: `extraction_report.md`.",
        "",
        "| threshold | STORE precision | STORE recall | sentences stored |",
        "|---|---|---|---|",
    ]
    for t in GRID:
        if round(t * 100) % 5 == 0 or abs(t - chosen.store_min_confidence) <= 0.02:
            precision, recall, stored = extraction_scores(extracted, PolicyThresholds(t, t))
            out.append(f"| {t:.2f} | {precision:.3f} | {recall:.3f} | {stored} |")
    return out


def report(
    rows: Sequence[Labelled],
    chosen: PolicyThresholds,
    sweep: Sequence[Scores],
    sup: Sequence[Scores],
    extracted: Sequence[Extracted] = (),
) -> str:
    final = score(rows, chosen)
    expected = Counter(row.expected.value for row in rows)
    out = [
        "# Policy calibration report",
        "",
        f"Generated by `scripts/calibrate_policy.py` on `tests/data/policy_candidates.jsonl` ({len(rows)} labelled"
        f" candidates: {expected['store']} store, {expected['review']} review, {expected['reject']} reject),"
        f" policy `{POLICY_VERSION}`. The set is written by `scripts/make_policy_dataset.py` (deterministic).",
        "",
        "## Chosen thresholds",
        "",
        f"- `store_min_confidence = {chosen.store_min_confidence:.2f}`",
        f"- `supersede_min_confidence = {chosen.supersede_min_confidence:.2f}`",
        "",
        "Why: precision first. A stored false belief or an attacker's instruction costs more than a missed",
        "convenience memory, so only thresholds with STORE precision 1.0 on the labelled set (and, when the",
        f"extraction set is read, at least {EXTRACTION_MIN_PRECISION} on it) are eligible; among them the ones with the"
        " highest STORE recall",
        "(summed over both sets) form a plateau, and the midpoint of that plateau is taken so",
        "that neither the most confident hedged statement nor the least confident clear one sets the bar alone.",
        "The supersede threshold is chosen the same way on the owner's same-intent updates, at or above the store",
        "threshold, because replacing an active record removes a belief the user relies on.",
        "",
        f"Defaults in `services/policy/domain/rules.py`: store {DEFAULT_THRESHOLDS.store_min_confidence:.2f},"
        f" supersede {DEFAULT_THRESHOLDS.supersede_min_confidence:.2f}"
        + (" (match)." if chosen == DEFAULT_THRESHOLDS else " (**differ: update the defaults**)."),
        "",
        "## Figures at the chosen thresholds",
        "",
        *_figures(final),
        "",
        "## Sweep of `store_min_confidence` (supersede = store)",
        "",
        "| threshold | STORE precision | STORE recall | REVIEW precision | REVIEW recall"
        " | REJECT precision | REJECT recall |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in sweep:
        t = s.thresholds.store_min_confidence
        if round(t * 100) % 5 == 0 or abs(t - chosen.store_min_confidence) <= 0.05:
            cells = " | ".join(f"{s.precision(o):.3f} | {s.recall(o):.3f}" for o in OUTCOMES)
            out.append(f"| {t:.2f} | {cells} |")
    out += ["", "## Sweep of `supersede_min_confidence` on owner same-intent updates", ""]
    out += ["| threshold | STORE precision | STORE recall |", "|---|---|---|"]
    for s in sup:
        t = s.thresholds.supersede_min_confidence
        out.append(f"| {t:.2f} | {s.precision(Outcome.STORE):.3f} | {s.recall(Outcome.STORE):.3f} |")
    out += [
        "",
        "## Per category at the chosen thresholds",
        "",
        "| category | n | expected | correct |",
        "|---|---|---|---|",
    ]
    by_category: dict[str, list[tuple[Labelled, Decision]]] = {}
    for row, decision in zip(final.rows, final.decisions, strict=True):
        by_category.setdefault(row.category, []).append((row, decision))
    for category, items in by_category.items():
        correct = sum(1 for row, decision in items if row.expected is decision.outcome)
        out.append(f"| {category} | {len(items)} | {items[0][0].expected.value} | {correct} |")
    forms = sorted({row.form for row in rows if row.candidate.origin is Origin.EXTERNAL_EMAIL})
    results = end_to_end(rows, chosen)
    out += [
        "",
        "## Extraction and policy end to end",
        "",
        f"Each of the {len(results)} owner or external texts without a conflict, given to the rule-based extractor",
        "as an e-mail body (from the owner or from an outsider) and its candidates to the policy; the verdict is",
        "the strictest decision, or no candidate at all (a missed memory, never a stored one).",
        "",
        *_end_to_end_figures(results),
    ]
    out += _extraction_section(extracted, chosen)
    out += ["", "## External-origin candidates by form", ""]
    out += ["| form | n | expected reject | rejected | stored |", "|---|---|---|---|---|"]
    for form in forms:
        items = [(r, d) for r, d in zip(final.rows, final.decisions, strict=True) if r.form == form]
        items = [(r, d) for r, d in items if r.candidate.origin is Origin.EXTERNAL_EMAIL]
        attacks = sum(1 for r, _ in items if r.expected is Outcome.REJECT)
        rejected = sum(1 for r, d in items if r.expected is Outcome.REJECT and d.outcome is Outcome.REJECT)
        stored = sum(1 for _, d in items if d.outcome is Outcome.STORE)
        out.append(f"| {form} | {len(items)} | {attacks} | {rejected} | {stored} |")
    code_counts = Counter(reason.code for decision in final.decisions for reason in decision.reasons)
    out += ["", "## Reason codes at the chosen thresholds", "", "| code | decisions |", "|---|---|"]
    out += [f"| {code} | {count} |" for code, count in sorted(code_counts.items())]
    out += ["", "## Disagreements at the chosen thresholds", ""]
    mistakes = final.mistakes()
    if not mistakes:
        out.append("None.")
    for row, decision in mistakes:
        codes = ", ".join(reason.code for reason in decision.reasons)
        out.append(
            f"- `{row.id}` ({row.category}, confidence {row.candidate.confidence:.2f}): expected"
            f" {row.expected.value}, got {decision.outcome.value} ({codes})"
        )
    out += [
        "",
        "## Limits",
        "",
        "The set is synthetic: sentences are hand-written templates, labels are encoded per template, and",
        "confidences are simulated around the rule-based extractor's scale (clear 0.88-0.95, hedged about",
        "0.66) with noise. The learned extractor reports on the same scale (see its section); a different extractor",
        "(an LLM) needs its own run on its own confidences, and real labelled traffic should replace the synthetic",
        "sets as soon as review decisions accumulate.",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--no-extraction", action="store_true", help="calibrate on the candidate set only")
    args = parser.parse_args()
    rows = load(args.data)
    extracted = [] if args.no_extraction else extract_set()
    chosen, sweep, supersede_sweep = choose(rows, extracted)
    final = score(rows, chosen)
    print(f"{len(rows)} labelled candidates; chosen {chosen}")
    for outcome in OUTCOMES:
        print(
            f"  {outcome.value.upper():6} precision {final.precision(outcome):.3f}  recall {final.recall(outcome):.3f}"
        )
    for row, decision in final.mistakes():
        print(f"  mismatch {row.id} {row.category}: expected {row.expected.value}, got {decision.outcome.value}")
    results = end_to_end(rows, chosen)
    stored = [row for row, got in results if got == "store"]
    wrong = sum(1 for row in stored if row.expected is not Outcome.STORE)
    print(f"  extraction+policy on {len(results)} texts: {len(stored)} stored, {wrong} of them wrongly")
    if extracted:
        precision, recall, stored = extraction_scores(extracted, chosen)
        print(f"  learned extractor, train split: STORE precision {precision:.3f} recall {recall:.3f} ({stored})")
    args.report.write_text(report(rows, chosen, sweep, supersede_sweep, extracted), encoding="utf-8")
    print(f"wrote {args.report}")


if __name__ == "__main__":
    main()
