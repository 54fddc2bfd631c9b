"""Write tests/data/extraction_sentences.jsonl: labelled sentences for the learned extractor.

Each template of ``extraction_dataset_texts.py`` is expanded with slot values (seeded, so running
twice writes the same bytes). Every row carries the sentence, who wrote it (``owner`` or
``external``), its type (preference, fact, procedural, none), its intent key ("" for none), topic,
phrasing, the template it came from, the split and what the loop should do with it:

* ``store``: the owner's clear first-person preference or fact (statement, paraphrase, negation);
* ``review``: the owner's standing rule (a procedure: a human approves it);
* ``reject``: an outsider's instruction to the agent (must never be active, nor reach review);
* ``none``: nothing may be stored (hedges, questions, sarcasm, quoted third parties, small talk,
  outsiders' own statements).

The split is BY TEMPLATE: within each topic every fourth storable template and every third other
template is held out, and outsiders' instructions are held out when their payload or their
wrapper is; so the test split holds phrasings the classifier never saw.

Run: ``.venv/bin/python scripts/make_extraction_dataset.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import extraction_dataset_texts as data  # beside this script, on sys.path when run as one

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_sentences.jsonl"
SEED = 20261201
VARIANTS = 8
STORED_PHRASINGS = frozenset({"statement", "paraphrase", "negation"})
_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Template:
    id: str
    topic: str
    type: str
    intent_key: str
    phrasing: str
    text: str


def parse(block: str, prefix: str, topic: str = "") -> list[Template]:
    templates: list[Template] = []
    for line in block.strip().splitlines():
        if line.startswith("## "):
            topic = line[3:].strip()
            continue
        head, _, text = line.partition(" :: ")
        memory_type, intent, phrasing = head.split()
        templates.append(
            Template(
                f"{prefix}{len(templates):03d}", topic, memory_type, "" if intent == "-" else intent, phrasing, text
            )
        )
    return templates


def expected(author: str, t: Template) -> str:
    if author == "external":
        return "reject" if t.type == "procedural" else "none"
    if t.type == "procedural":
        return "review"
    return "store" if t.type in ("preference", "fact") and t.phrasing in STORED_PHRASINGS else "none"


def held_out(templates: list[Template], author: str) -> set[str]:
    """Every 4th storable and every 3rd other template per topic (offset 1): unseen phrasings."""
    test: set[str] = set()
    by_topic: dict[tuple[str, bool], list[Template]] = {}
    for t in templates:
        by_topic.setdefault((t.topic, expected(author, t) == "store"), []).append(t)
    for (_, storable), group in by_topic.items():
        step = 4 if storable else 3
        test |= {t.id for index, t in enumerate(group) if index % step == 1}
    return test


def fill(template: str, rng: random.Random, variants: int) -> list[str]:
    slots = sorted(set(_SLOT.findall(template)))
    orders = {slot: rng.sample(data.SLOTS[slot], len(data.SLOTS[slot])) for slot in slots}
    texts: list[str] = []
    for k in range(variants):
        text = template.format(**{slot: orders[slot][(k + i) % len(orders[slot])] for i, slot in enumerate(slots)})
        if text not in texts:
            texts.append(text)
    return texts


def row(text: str, author: str, t: Template, split: str, template_id: str) -> dict[str, Any]:
    return {
        "text": text,
        "author": author,
        "type": t.type,
        "intent_key": t.intent_key,
        "topic": t.topic,
        "phrasing": t.phrasing,
        "template": template_id,
        "split": split,
        "expected": expected(author, t),
    }


def build() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    rows: list[dict[str, Any]] = []
    owner = parse(data.OWNER_TEMPLATES, "o")
    test = held_out(owner, "owner")
    for t in owner:
        for text in fill(t.text, rng, VARIANTS):
            rows.append(row(text, "owner", t, "test" if t.id in test else "train", t.id))
    external = parse(data.EXTERNAL_TEMPLATES, "x", "external")
    test = held_out(external, "external")
    for t in external:
        for text in fill(t.text, rng, VARIANTS):
            rows.append(row(text, "external", t, "test" if t.id in test else "train", t.id))
    payloads = parse(data.INJECTION_TEMPLATES, "p", "injection")
    wrappers = data.INJECTION_WRAPPERS
    test_payloads = {t.id for index, t in enumerate(payloads) if index % 4 == 1}
    test_wrappers = {index for index in range(len(wrappers)) if index % 4 == 1}
    for t in payloads:
        for w, wrapper in enumerate(wrappers):
            split = "test" if t.id in test_payloads or w in test_wrappers else "train"
            for text in fill(t.text, rng, 2):
                rows.append(row(wrapper.format(s=text), "external", t, split, f"{t.id}w{w}"))
    seen: set[tuple[str, str]] = set()
    unique = []
    for r in rows:
        if (r["text"], r["author"]) not in seen:
            seen.add((r["text"], r["author"]))
            unique.append({"id": f"ex-{len(unique) + 1:05d}", **r})
    return unique


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = build()
    args.out.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows), encoding="utf-8")
    counts = Counter((r["split"], r["expected"]) for r in rows)
    print(f"wrote {len(rows)} sentences to {args.out}: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
