"""The labelled redaction corpus: per-kind recall and precision floors, look-alikes kept, detect-secrets covered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from services.common.redaction import RedactionMode, Redactor
from services.common.redaction_second_opinion import detect_secrets_hits
from services.common.text_folding import fold_with_map
from tests.redaction_eval import CORPUS, KINDS, load_corpus, score

ROOT = Path(__file__).resolve().parents[2]
RECALL_FLOOR = 0.95
PRECISION_FLOOR = 0.95


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, object]]:
    return load_corpus()


def test_the_corpus_is_large_varied_and_what_its_generator_writes(tmp_path: Path) -> None:
    # Given the committed corpus  When the generator runs again
    committed = CORPUS.read_text(encoding="utf-8")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_redaction_corpus.py")], check=True, cwd=ROOT,
                   capture_output=True)  # fmt: skip
    # Then it writes the same bytes, at least 300 strings, with positives of every kind and look-alikes
    assert CORPUS.read_text(encoding="utf-8") == committed
    records = load_corpus()
    kinds = {str(r["kind"]) for r in records}
    assert len(records) >= 300
    assert kinds >= {*KINDS, "none"}
    assert sum(r["kind"] == "none" for r in records) >= 100


@pytest.mark.parametrize("mode", list(RedactionMode))
def test_every_kind_meets_its_recall_and_precision_floor(corpus: list[dict[str, object]], mode: RedactionMode) -> None:
    # Given the labelled corpus  When every string is redacted
    result = score(corpus, Redactor(mode))
    # Then every kind is caught and reported precisely enough, with the misses named
    for kind, counts in result.kinds.items():
        assert counts.recall >= RECALL_FLOOR, (kind, counts.missed_texts)
        assert counts.precision >= PRECISION_FLOOR, (kind, counts.spurious_texts)


def test_look_alikes_survive(corpus: list[dict[str, object]]) -> None:
    # Given order numbers, tracking ids, ISBNs, versions, commit SHAs, invoices, dates and meeting times
    # When redacted as serving does
    result = score(corpus, Redactor(RedactionMode.THOROUGH))
    # Then almost all come through untouched and each look-alike itself always survives
    assert result.negatives_clean >= 0.97 * result.negatives
    assert result.keep_failures == []


def test_the_request_path_detectors_cover_everything_detect_secrets_finds(corpus: list[dict[str, object]]) -> None:
    # Given detect-secrets' plugins run over every corpus string
    fast = Redactor(RedactionMode.FAST)
    uncovered = []
    for record in corpus:
        text = str(record["text"])
        folded, origin = fold_with_map(text)
        hidden = {i for f in fast.scan(text) for i in range(f.start, f.end)}
        # When their spans are compared with what our own detectors remove
        for start, end, _, name, _ in detect_secrets_hits(folded):
            span = range(origin[start], origin[end - 1] + 1)
            if not all(i in hidden for i in span if text[i].isalnum()):
                uncovered.append((name, text))
    # Then nothing detect-secrets finds is left by our detectors alone (the second opinion adds no coverage here)
    assert uncovered == []
