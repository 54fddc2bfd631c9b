"""Train the learned extractor's heads on the train split of tests/data/extraction_sentences.jsonl.

Embeds each sentence (folded, as the extractor folds it) with the offline MiniLM encoder, fits two
multinomial logistic regressions (scikit-learn, lbfgs: deterministic for the same inputs) and writes
their weights to ``services/worker/adapters/extractor_model/heads.npz`` (float32 arrays, no
pickle) with ``heads.json`` beside it saying what they were trained on.

* type head: preference, fact, procedural, none — on every training sentence, owner's and outsiders';
* intent head: the intent keys of the taxonomy plus ``other`` (no single-valued intent) — on every
  training sentence that is not a procedure (hedges and questions name a topic too).

Only the train split is used: the test split's templates stay unseen for the extraction report.
``--check`` retrains and fails if the committed weights differ (they reproduce from this script).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python scripts/train_extractor.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from services.common.text_folding import fold_for_matching  # noqa: E402 - after the path fix
from services.worker.adapters.sentence_model import ENCODER_NAME, HEADS_FILE, MiniLmSentenceEncoder  # noqa: E402
from services.worker.domain.sentence_heads import NO_INTENT  # noqa: E402

DATA = ROOT / "tests" / "data" / "extraction_sentences.jsonl"
SEED = 20261201
C = 4.0  # inverse regularisation; the templates are clean, the test phrasings are not: keep it moderate


def load_rows(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def fit(x: np.ndarray, labels: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=5000, random_state=SEED, class_weight="balanced")
    model.fit(x, labels)
    return (
        np.asarray(model.classes_, dtype=str),
        np.asarray(model.coef_, dtype=np.float32),
        np.asarray(model.intercept_, dtype=np.float32),
    )


def train(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    train_rows = [row for row in rows if row["split"] == "train"]
    encoder = MiniLmSentenceEncoder(precision="fp32")  # the heads are fitted on the model as shipped
    x = encoder.embed([fold_for_matching(row["text"]) for row in train_rows])
    type_labels, type_w, type_b = fit(x, [row["type"] for row in train_rows])
    topical = [i for i, row in enumerate(train_rows) if row["type"] != "procedural"]
    intents = [train_rows[i]["intent_key"] or NO_INTENT for i in topical]
    intent_labels, intent_w, intent_b = fit(x[topical], intents)
    return {
        "embedder": np.asarray(ENCODER_NAME),
        "type_labels": type_labels,
        "type_weights": type_w,
        "type_bias": type_b,
        "intent_labels": intent_labels,
        "intent_weights": intent_w,
        "intent_bias": intent_b,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=HEADS_FILE)
    parser.add_argument("--check", action="store_true", help="retrain and compare with the committed weights")
    args = parser.parse_args()
    rows = load_rows(args.data)
    arrays = train(rows)
    if args.check:
        with np.load(args.out, allow_pickle=False) as committed:
            for key, value in arrays.items():
                same = (
                    np.array_equal(committed[key], value)
                    if value.dtype.kind in "US"
                    else np.allclose(committed[key], value, atol=1e-3)
                )
                if not same:
                    raise SystemExit(f"{key} differs from {args.out}: retrain and commit")
        print(f"{args.out} reproduces from {args.data}")
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)  # type: ignore[arg-type]
    meta = {
        "data": str(args.data.relative_to(ROOT)) if args.data.is_relative_to(ROOT) else str(args.data),
        "data_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "train_sentences": sum(1 for row in rows if row["split"] == "train"),
        "encoder": ENCODER_NAME,
        "C": C,
        "seed": SEED,
        "type_labels": [str(label) for label in arrays["type_labels"]],
        "intent_labels": [str(label) for label in arrays["intent_labels"]],
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size} bytes): {len(meta['type_labels'])} types, {len(meta['intent_labels'])} intents")


if __name__ == "__main__":
    main()
