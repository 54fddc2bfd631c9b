"""Write tests/data/extraction_report.md: what the loop learns from the held-out extraction sentences.

Every sentence of the TEST split of ``tests/data/extraction_sentences.jsonl`` (templates the
classifier never saw) is sent as one e-mail — from the owner or from an outsider, bare or with a
greeting and sign-off — through the worker's own use case in process: ``process_event`` with
thorough redaction, the extractor under test, the real policy rules (``evaluate``, default
thresholds) behind the in-process policy gate, and the worker's in-memory memory fake. Each
sentence gets its own user, so nothing supersedes anything. No gRPC, database or stream is
involved: the figures measure extraction and policy, not transport.

A sentence's verdict is the strictest outcome that STORED, REVIEWED or REJECTED anything it
yielded — "store" when any of its candidates became active — or "none". Figures:

* owner-statement recall: owner preferences and facts stated clearly, active (and active or review);
* stored-memory precision: of the sentences that left an active memory, the share expected to;
* external instructions: outsiders' instructions that became active, or reached review;
* hedged statements stored: the owner's hedges that became active.

Run: ``make extraction-report`` (or ``HF_HUB_OFFLINE=1 .venv/bin/python scripts/extraction_report.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from services.common.encoder_precision import PRECISIONS  # noqa: E402 - after the path fix
from services.common.redaction import RedactionMode, Redactor  # noqa: E402 - after the path fix
from services.common.vocabulary import Candidate, Decision, Outcome  # noqa: E402
from services.policy.domain.rules import DEFAULT_THRESHOLDS, Conflict, PolicyThresholds, evaluate  # noqa: E402
from services.worker.adapters.in_memory import InMemoryContentReader, InMemoryMemory, InProcessPolicyGate  # noqa: E402
from services.worker.domain.extraction import CandidateExtractor, RuleBasedExtractor  # noqa: E402
from services.worker.service.model import ConflictRecord, EmailView, LearningEventView  # noqa: E402
from services.worker.service.process_event import LearningPorts, process_event  # noqa: E402

DATA = ROOT / "tests" / "data" / "extraction_sentences.jsonl"
REPORT = ROOT / "tests" / "data" / "extraction_report.md"
OWNER, OUTSIDER = "alice@acme.example", "bob.tan@partner.example"
FLOORS = {"recall_active_or_review": 0.9, "recall_active": 0.8, "stored_precision": 0.95}
_SEVERITY = {"store": 3, "reject": 2, "review": 1, "none": 0}


def load_rows(path: Path = DATA, split: str = "test") -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row["split"] == split]


def email_for(row: dict[str, Any], index: int) -> EmailView:
    """The sentence as an e-mail in one of three layouts, so greetings and sign-offs are exercised."""
    owner = row["author"] == "owner"
    text, name = row["text"], "Alice" if owner else "Bob"
    subject, body = (
        ("", text),
        ("Quick note", f"Hi,\n\n{text}\n\nThanks,\n{name}"),
        ("Re: next week", f"{text}\n\nBest,\n{name[0]}."),
    )[index % 3]
    return EmailView(
        user=f"u{index}",
        from_address=OWNER if owner else OUTSIDER,
        to_address="assistant@acme.example" if owner else OWNER,
        subject=subject,
        body=body,
        from_owner=owner,
    )


def _decide(thresholds: PolicyThresholds) -> Any:
    def decide(candidate: Candidate, conflicts: Sequence[ConflictRecord]) -> Decision:
        found = [Conflict(c.memory_id, c.intent_key, c.text, c.type) for c in conflicts]
        return evaluate(candidate, found, None, thresholds)

    return decide


async def _run(
    rows: Sequence[dict[str, Any]], extractor: CandidateExtractor, thresholds: PolicyThresholds
) -> list[tuple[str, tuple[Decision, ...]]]:
    content, memory = InMemoryContentReader(), InMemoryMemory()
    ports = LearningPorts(
        content=content, conflicts=memory, policy=InProcessPolicyGate(_decide(thresholds)), memory=memory
    )
    redactor, results = Redactor(RedactionMode.THOROUGH), []
    for index, row in enumerate(rows):
        email = email_for(row, index)
        content.put("acme", f"content-{index}", email)
        event = LearningEventView(
            event_id=f"evt-{index}",
            trace_id="0" * 32,
            request_id=f"req-{index}",
            tenant="acme",
            user=email.user,
            thread="thr",
            route="assistant.instruction",
            content_ref=f"content-{index}",
            owner_address=OWNER,
        )
        result = await process_event(event, ports, redactor=redactor, extractor=extractor)
        decisions = result.decisions
        verdict = max((d.outcome.value for d in decisions), key=_SEVERITY.__getitem__, default="none")
        results.append((verdict, decisions))
    return results


def run(
    rows: Sequence[dict[str, Any]], extractor: CandidateExtractor, thresholds: PolicyThresholds = DEFAULT_THRESHOLDS
) -> list[tuple[str, tuple[Decision, ...]]]:
    """(verdict, decisions) per row, through the worker's use case and the policy rules."""
    return asyncio.run(_run(rows, extractor, thresholds))


@dataclass(frozen=True)
class Figures:
    rows: tuple[dict[str, Any], ...]
    verdicts: tuple[str, ...]

    def _count(self, verdicts: set[str], **where: Any) -> tuple[int, int]:
        picked = [
            v for row, v in zip(self.rows, self.verdicts, strict=True) if all(row[k] == w for k, w in where.items())
        ]
        return sum(1 for v in picked if v in verdicts), len(picked)

    def ratio(self, verdicts: set[str], **where: Any) -> float:
        hit, total = self._count(verdicts, **where)
        return hit / total if total else 1.0

    @property
    def recall_active(self) -> float:
        return self.ratio({"store"}, author="owner", expected="store")

    @property
    def recall_active_or_review(self) -> float:
        return self.ratio({"store", "review"}, author="owner", expected="store")

    @property
    def stored(self) -> tuple[int, int]:
        """Sentences that left an active memory: (expected to, all)."""
        stored = [row for row, v in zip(self.rows, self.verdicts, strict=True) if v == "store"]
        return sum(1 for row in stored if row["expected"] == "store"), len(stored)

    @property
    def stored_precision(self) -> float:
        good, total = self.stored
        return good / total if total else 1.0

    @property
    def external_instructions_active(self) -> int:
        return self.count({"store"}, author="external", expected="reject")

    @property
    def external_instructions_in_review(self) -> int:
        return self.count({"review"}, author="external", expected="reject")

    @property
    def hedges_stored(self) -> int:
        return self.count({"store"}, author="owner", phrasing="hedge")

    def count(self, verdicts: set[str], **where: Any) -> int:
        return self._count(verdicts, **where)[0]

    def total(self, **where: Any) -> int:
        return self._count(set(), **where)[1]


def figures(rows: Sequence[dict[str, Any]], results: Sequence[tuple[str, tuple[Decision, ...]]]) -> Figures:
    return Figures(tuple(rows), tuple(verdict for verdict, _ in results))


def _summary(name: str, f: Figures) -> str:
    good, stored = f.stored
    return (
        f"| {name} | {f.recall_active_or_review:.3f} | {f.recall_active:.3f}"
        f" | {f.stored_precision:.3f} ({good}/{stored})"
        f" | {f.external_instructions_active} / {f.external_instructions_in_review} | {f.hedges_stored} |"
    )


def report(
    rows: Sequence[dict[str, Any]],
    learned: Figures,
    rules: Figures,
    learned_results: Sequence[Any],
    precision: str = "int8",
) -> str:
    owner_statements = learned.total(author="owner", expected="store")
    out = [
        "# Extraction report",
        "",
        "Generated by `make extraction-report` (`scripts/extraction_report.py`) on the held-out TEST split of",
        f"`tests/data/extraction_sentences.jsonl`: {len(rows)} sentences from templates the classifier never saw",
        f"({owner_statements} clear owner statements, {learned.total(author='external', expected='reject')} outsiders'"
        f" instructions in unseen wrappers, {learned.total(author='owner', phrasing='hedge')} owner hedges). Each",
        "sentence is one e-mail through the worker's use case in process (`process_event`: thorough redaction,",
        "extraction, the real policy rules at their default thresholds, the in-memory memory fake); no gRPC,",
        "database or stream. `learned` is the worker's extractor in MiniLM mode (encoder precision"
        f" `{precision}`, `MEMLOOP_WORKER_ENCODER_PRECISION`; `--precision` for the other), `rules` the rule extractor",
        "alone (the hashing-embedder mode). Through the whole stack as processes (gRPC, PostgreSQL, NATS),",
        "`tests/e2e/test_learned_loop.py` shows statements the rules miss becoming active in MiniLM mode.",
        "",
        "| extractor | owner recall, active or review | owner recall, active | stored precision"
        " | external instructions active / in review | hedges stored |",
        "|---|---|---|---|---|---|",
        _summary("learned", learned),
        _summary("rules", rules),
        "",
        f"Floors (asserted by `tests/unit/test_learned_extraction.py`): recall active or review ≥"
        f" {FLOORS['recall_active_or_review']}, active ≥ {FLOORS['recall_active']}, stored precision ≥"
        f" {FLOORS['stored_precision']}, external instructions active 0 and in review 0, hedges stored 0.",
        "",
        "## Owner statements by topic (learned)",
        "",
        "| topic | n | active | review | nothing |",
        "|---|---|---|---|---|",
    ]
    for topic in sorted({row["topic"] for row in rows if row["author"] == "owner" and row["expected"] == "store"}):
        where = {"author": "owner", "expected": "store", "topic": topic}
        n = learned.total(**where)
        cells = [learned.count({v}, **where) for v in ("store", "review", "none")]
        out.append(f"| {topic} | {n} | " + " | ".join(str(c) for c in cells) + " |")
    out += ["", "## Verdicts by author and phrasing (learned)", ""]
    out += [
        "| author | phrasing | expected | n | store | review | reject | none |",
        "|---|---|---|---|---|---|---|---|",
    ]
    groups = sorted({(row["author"], row["phrasing"], row["expected"]) for row in rows})
    for author, phrasing, expected in groups:
        where = {"author": author, "phrasing": phrasing, "expected": expected}
        cells = [learned.count({v}, **where) for v in ("store", "review", "reject", "none")]
        out.append(
            f"| {author} | {phrasing} | {expected} | {learned.total(**where)} | " + " | ".join(map(str, cells)) + " |"
        )
    reasons = Counter(
        r.code
        for verdict, decisions in learned_results
        for d in decisions
        if d.outcome is Outcome.REVIEW
        for r in d.reasons
    )
    out += ["", "## Why owner sentences went to review (learned)", "", "| reason | decisions |", "|---|---|"]
    out += [f"| {code} | {n} |" for code, n in sorted(reasons.items())]
    misses = [
        (row, verdict)
        for row, verdict in zip(learned.rows, learned.verdicts, strict=True)
        if (row["expected"] == "store") != (verdict == "store")
        and not (row["expected"] == "review" and verdict == "review")
    ]
    out += ["", f"## Disagreements (learned, {len(misses)})", ""]
    out += [
        f"- expected {row['expected']}, got {verdict}: {row['author']} {row['phrasing']}: {row['text']}"
        for row, verdict in misses
    ]
    out += [
        "",
        "## Limits",
        "",
        "The sentences are synthetic (templates x slot values, `scripts/make_extraction_dataset.py`); the split is by",
        "template, so test phrasings are unseen, but topics and slot values are shared with training. Sentences are",
        "judged one per e-mail and one per user, so supersession between statements is not exercised here (the e2e",
        "tests cover it). Real labelled traffic from review decisions should replace the set as it accumulates.",
        "",
    ]
    return "\n".join(out)


def learned_extractor(rows: Sequence[dict[str, Any]] = (), precision: str = "int8") -> CandidateExtractor:
    """The worker's MiniLM-mode extractor at the encoder ``precision``. At fp32 the rows' sentences are
    embedded ahead in one batch (speed only: fp32 rows do not depend on their batch). int8 quantises
    each call's activations with one scale per call, so a row depends a little on its batch-mates:
    there each e-mail is embedded on its own, as the worker does at low rates."""
    from services.common.text_folding import fold_for_matching
    from services.worker.adapters.sentence_model import MiniLmSentenceEncoder, PreparedEncoder, load_heads
    from services.worker.domain.learned_extraction import LearnedExtractor, SentenceEncoder

    model = MiniLmSentenceEncoder(precision=precision)
    encoder: SentenceEncoder = model
    if precision == "fp32":
        encoder = PreparedEncoder(model, [fold_for_matching(row["text"]) for row in rows])
    return LearnedExtractor(encoder, load_heads())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--precision", choices=PRECISIONS, default="int8", help="the worker's encoder precision")
    args = parser.parse_args()
    rows = load_rows(args.data)
    learned_results = run(rows, learned_extractor(rows, args.precision))
    learned = figures(rows, learned_results)
    rules = figures(rows, run(rows, RuleBasedExtractor()))
    for name, f in (("learned", learned), ("rules", rules)):
        print(
            f"{name}: recall {f.recall_active_or_review:.3f} active-or-review, {f.recall_active:.3f} active;"
            f" stored precision {f.stored_precision:.3f}"
        )
    args.report.write_text(report(rows, learned, rules, learned_results, args.precision), encoding="utf-8")
    print(f"wrote {args.report}")


if __name__ == "__main__":
    main()
