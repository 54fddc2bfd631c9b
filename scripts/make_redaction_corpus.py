"""Generate the labelled redaction corpus: positives of every kind and look-alike negatives.

Writes ``tests/data/redaction_corpus.jsonl`` (deterministic: a fixed seed). Each line is one string:

* ``kind`` — the family a detector must report (``secret``, ``gov_id``, ``date_of_birth``, ``address``,
  ``phone``, ``email``, ``card``, ``iban``), or ``none`` for a look-alike negative;
* ``subkind`` — the shape (``aws_pair``, ``uk_nino``, ``lookalike:isbn``...), for the report;
* ``values`` — the sensitive substrings that must not survive redaction (empty for negatives);
* ``keep`` — substrings that must survive (the look-alike itself, for negatives);
* ``text`` — the value in a template, the template in a wrapper (plain, reply, forward, chat, HTML,
  signature), in one of several languages.

Values are synthetic (random keys, checksummed ids built here) so the file holds no real secret.
Run: ``python scripts/make_redaction_corpus.py`` (``make redaction-report`` runs it first).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from redaction_corpus_handwritten import HANDWRITTEN  # beside this script, on sys.path when run as one
from redaction_corpus_values import Values, negatives

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "tests" / "data" / "redaction_corpus.jsonl"
SEED = 18

Record = dict[str, object]

WRAPPERS: tuple[Callable[[str], str], ...] = (
    lambda t: t,
    lambda t: f"Hi Sam,\n\n{t}\n\nThanks,\nJo",
    lambda t: f"Hallo Team,\n{t}\nViele Grüße\nAnke",
    lambda t: f"Bonjour,\n{t}\nCordialement,\nLéa",
    lambda t: f"> On Tue, Dana wrote:\n> {t}\n\nNoted, thanks.",
    lambda t: f"---------- Forwarded message ---------\nFrom: ops\nSubject: access\n\n{t}",
    lambda t: f"[10:42] kim: {t}",
    lambda t: f"<p>{t}</p>",
    lambda t: f"{t}\n--\nSent from my phone",
    lambda t: f"Quick one - {t} Cheers!",
)


def _wrap(rng: random.Random, text: str) -> str:
    return rng.choice(WRAPPERS)(text)


def positives(rng: random.Random, v: Values) -> list[Record]:
    records: list[Record] = []

    def add(kind: str, subkind: str, template: str, **values: str) -> None:
        text = _wrap(rng, template.format(**values))
        records.append({"kind": kind, "subkind": subkind, "text": text, "values": list(values.values()), "keep": []})

    for template in v.aws_pair_templates:
        add("secret", "aws_pair", template, key_id=v.aws_key_id(), secret=v.aws_secret())
    for template, key_id, secret in v.other_pairs():
        add("secret", "provider_pair", template, key_id=key_id, secret=secret)
    for template, value in v.credential_statements():
        add("secret", "credential_context", template, value=value)
    for template, value in v.entropy_in_context():
        add("secret", "entropy_in_context", template, value=value)
    for template, value in v.provider_tokens():
        add("secret", "provider_token", template, value=value)
    for subkind, template, value in v.national_ids():
        add("gov_id", subkind, template, value=value)
    for template, value in v.dates_of_birth():
        add("date_of_birth", "dob_in_context", template, value=value)
    for subkind, template, value in v.addresses():
        add("address", subkind, template, value=value)
    for kind, template, value in v.contact_and_payment():
        add(kind, kind, template, value=value)
    return records


def build() -> list[Record]:
    rng = random.Random(SEED)
    values = Values(rng)
    records: list[Record] = []
    for _ in range(2):  # every template twice: fresh values, another wrapper
        records += positives(rng, values)
        for subkind, text, keep in negatives(rng):
            records.append({"kind": "none", "subkind": f"lookalike:{subkind}", "text": _wrap(rng, text),
                            "values": [], "keep": keep})  # fmt: skip
    for kind, subkind, text, values_, keep in HANDWRITTEN:
        records.append({"kind": kind, "subkind": subkind, "text": text, "values": values_, "keep": keep})
    unique = {str(r["text"]): r for r in records}
    return list(unique.values())


def main() -> None:
    records = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    kinds: dict[str, int] = {}
    for r in records:
        kinds[str(r["kind"])] = kinds.get(str(r["kind"]), 0) + 1
    print(f"wrote {len(records)} strings to {OUT.relative_to(ROOT)}: {kinds}")


if __name__ == "__main__":
    main()
