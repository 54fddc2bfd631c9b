"""Scoring the redactor on the labelled corpus: per-kind recall and precision, shared by test and report.

A positive counts as caught when redaction covers at least 90% of each labelled value's letters and
digits (a street redacted without its house number is not caught). A finding that overlaps no
labelled value is spurious and counts against the precision of its kind; on a look-alike negative
every finding is spurious, and each ``keep`` substring must also survive.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from services.common.pii.model import Finding, FindingKind
from services.common.redaction import Redactor

CORPUS = Path(__file__).resolve().parent / "data" / "redaction_corpus.jsonl"

FAMILY = {
    FindingKind.PASSWORD: "secret",
    FindingKind.SECRET: "secret",
    FindingKind.GOV_ID: "gov_id",
    FindingKind.DATE_OF_BIRTH: "date_of_birth",
    FindingKind.ADDRESS: "address",
    FindingKind.PHONE: "phone",
    FindingKind.EMAIL: "email",
    FindingKind.CARD: "card",
    FindingKind.IBAN: "iban",
    FindingKind.BANK_ACCOUNT: "bank_account",
    FindingKind.IP_ADDRESS: "ip_address",
    FindingKind.MAC_ADDRESS: "mac_address",
    FindingKind.LOCATION: "location",
}
KINDS = (
    "secret",
    "gov_id",
    "date_of_birth",
    "address",
    "phone",
    "email",
    "card",
    "iban",
    "bank_account",
    "ip_address",
    "mac_address",
    "location",
)


def load_corpus(path: Path = CORPUS) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class KindScore:
    """Counts for one kind: positives caught, positives missed, spurious findings of this kind."""

    positives: int = 0
    caught: int = 0
    spurious: int = 0
    missed_texts: list[str] = field(default_factory=list)
    spurious_texts: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.positives if self.positives else 1.0

    @property
    def precision(self) -> float:
        return self.caught / (self.caught + self.spurious) if self.caught + self.spurious else 1.0


@dataclass
class Score:
    kinds: dict[str, KindScore]
    subkinds: dict[str, KindScore]
    negatives: int
    negatives_clean: int
    keep_failures: list[str]


def _value_spans(text: str, value: str) -> list[tuple[int, int]]:
    spans, start = [], text.find(value)
    while start != -1:
        spans.append((start, start + len(value)))
        start = text.find(value, start + 1)
    return spans


def _covered(text: str, span: tuple[int, int], findings: Iterable[Finding]) -> bool:
    wanted = [i for i in range(*span) if text[i].isalnum()]
    hidden = {i for f in findings for i in range(f.start, f.end)}
    return sum(i in hidden for i in wanted) >= 0.9 * len(wanted)


def score(records: list[dict[str, object]], redactor: Redactor) -> Score:
    kinds = {k: KindScore() for k in KINDS}
    subkinds: dict[str, KindScore] = {}
    negatives = clean = 0
    keep_failures: list[str] = []
    for record in records:
        text, kind = str(record["text"]), str(record["kind"])
        values = [str(v) for v in record["values"]]  # type: ignore[attr-defined]
        result = redactor.redact(text)
        spans = [s for v in values for s in _value_spans(text, v)]
        spurious = [f for f in result.findings if not any(f.start < e and s < f.end for s, e in spans)]
        for family in {FAMILY[f.kind] for f in spurious}:
            kinds[family].spurious += 1
            kinds[family].spurious_texts.append(text)
        if kind == "none":
            negatives += 1
            clean += not result.findings
            keep_failures += [f"{k!r} in {text!r}" for k in record["keep"] if k not in result.text]  # type: ignore[attr-defined]
            continue
        sub = subkinds.setdefault(f"{kind}/{record['subkind']}", KindScore())
        caught = all(_covered(text, span, result.findings) for span in spans) and bool(spans)
        for bucket in (kinds[kind], sub):
            bucket.positives += 1
            bucket.caught += caught
            if not caught:
                bucket.missed_texts.append(text)
    return Score(kinds, subkinds, negatives, clean, keep_failures)
