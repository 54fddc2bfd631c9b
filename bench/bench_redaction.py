"""Redaction on the request path: thorough mode (what serving now runs) against fast mode, µs per e-mail.

Serving redacts every request with the worker's full coverage before its transaction opens, so the
thorough mode's cost lands on every reply. This prints its cost per e-mail next to the fast mode's
(the same detectors without detect-secrets' second opinion), measured in the same run on the same
e-mails, and the ratio. Two workloads: ordinary 2 KB mails built from Alice's fixture (mostly prose),
and mails laden with the labelled corpus' secrets and PII (the worst case: every detector fires).
A third row is adversarial: bodies as large as HandleRequest accepts, each one piece repeated
(digit groups, credential stems glued together, a JWT's prefix...), the worst against as much prose.
A fourth does the same for the worker's reading of an owner's mail after redaction (its parts, its
sentences, who wrote each: the rules extractor, without a model), whose quote marks once cost 16 s
for 32 KB of "<<".
CPU time (``process_time``), best of several rounds, so other processes on a shared machine count less.

    .venv/bin/python -m bench.bench_redaction [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from bench._harness import Row, row
from services.common.redaction import RedactionMode, Redactor
from services.serving.domain.validation import BODY_MAX_BYTES
from services.worker.domain.extraction import EmailContent, ExtractionInput, RuleBasedExtractor
from tests.fixtures import load_fixture
from tests.redaction_eval import load_corpus

THOROUGH_BUDGET_US = 2_000.0  # per 2 KB e-mail: a small share of HandleRequest's own commit
RATIO_GOAL = 2.0


def prose_emails() -> list[str]:
    """Alice's mails, each padded with ordinary prose to 2 KB."""
    filler = "We reviewed the Q1 rollout plan with the team and agreed the milestones for next week. "
    bodies = [str(r["content"]["body"]) for r in load_fixture("alice.json")["requests"]]
    return [(body + "\n" + filler * 30)[:2048] for body in bodies]


def laden_emails() -> list[str]:
    """2 KB mails made of corpus strings: secrets, ids, birth dates, addresses and their look-alikes."""
    texts = [str(r["text"]) for r in load_corpus()]
    mails, current = [], ""
    for text in texts:
        current += text + "\n"
        if len(current) >= 2048:
            mails.append(current[:2048])
            current = ""
    return mails


def per_email_us(redactor: Redactor, emails: Sequence[str], rounds: int) -> float:
    for text in emails:
        redactor.redact(text)  # warm caches (folding, lazily built patterns)
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for text in emails:
            redactor.redact(text)
        best = min(best, (time.process_time() - started) / len(emails))
    return best * 1e6


def run(quick: bool) -> list[Row]:
    rounds = 3 if quick else 10
    fast, thorough = Redactor(RedactionMode.FAST), Redactor(RedactionMode.THOROUGH)
    rows: list[Row] = []
    workloads = (("2 KB prose e-mails", prose_emails(), True), ("2 KB e-mails laden with PII", laden_emails(), False))
    for name, emails, judged in workloads:
        fast_us = per_email_us(fast, emails, rounds)
        thorough_us = per_email_us(thorough, emails, rounds)
        met = thorough_us <= THOROUGH_BUDGET_US and thorough_us / fast_us <= RATIO_GOAL
        rows.append(
            row(
                f"redaction µs per e-mail, {name}: thorough (serving, worker) vs fast (baseline)",
                round(thorough_us, 1),
                round(fast_us, 1),
                round(thorough_us / fast_us, 2),
                f"thorough ≤ {THOROUGH_BUDGET_US:,.0f} µs, ratio ≤ {RATIO_GOAL}" if judged else "reported (worst case)",
                met if judged else None,
            )
        )
    rows.append(_adversarial_row(thorough, rounds=1 if quick else 3))
    rows.append(_adversarial_reading_row(rounds=1 if quick else 3))
    return rows


# Bodies a sender can write to make the worker's reading of a mail slow ("<<" was quadratic once; one
# letter repeated, 9 s per 32 KB under a first pattern for "vendor.example whitelisted"; "#" repeated,
# 6.7 s per 16 KB in the steering and chat-template patterns). Each is read as the owner's mail and as
# an outsider's, whose sentences the steering patterns read too.
ADVERSARIAL_READING_PIECES = (
    "<<", "> ", ">> ", "```", "[quote]", "Bob > ", "<b>", "I prefer ", '"I ', "Fwd: ", "a", "x.co ", "assistent ", "#",
)  # fmt: skip


def _reading_ms(extractor: RuleBasedExtractor, body: str, rounds: int) -> float:
    """The slower of reading `body` as the owner's mail and as an outsider's."""
    slowest = 0.0
    for sender, from_owner in (("[EMAIL@acme.example]", True), ("[EMAIL@vendor.example]", False)):
        email = EmailContent(sender, "[EMAIL@acme.example]", "Re: invoices", body)
        event = ExtractionInput("evt-bench", "0" * 32, "acme", "alice", "assistant.instruction", (), email, from_owner)
        best = float("inf")
        for _ in range(rounds):
            started = time.process_time()
            extractor.extract(event)
            best = min(best, time.process_time() - started)
        slowest = max(slowest, best)
    return slowest * 1000


def _adversarial_reading_row(rounds: int) -> Row:
    size = BODY_MAX_BYTES
    extractor = RuleBasedExtractor()
    prose_ms = _reading_ms(extractor, (prose_emails()[0] * (size // 2048 + 1))[:size], rounds)
    costs = {
        piece: _reading_ms(extractor, (piece * (size // len(piece) + 1))[:size], rounds)
        for piece in ADVERSARIAL_READING_PIECES
    }
    figure = "worker reading ms per {size} KB adversarial mail, owner's or outsider's (worst: {worst}) vs as much prose"
    return _worst_row(figure, "mails read by the worker", costs, prose_ms)


def _worst_row(figure: str, printed: str, costs: dict[str, float], prose_ms: float) -> Row:
    """The worst adversarial body's cost against as much prose, each body's cost printed."""
    worst = max(costs, key=costs.__getitem__)
    print(f"  adversarial {printed}, ms: " + ", ".join(f"{piece!r} {ms:.0f}" for piece, ms in costs.items()))
    return row(
        figure.format(size=BODY_MAX_BYTES // 1024, worst=repr(worst)),
        round(costs[worst], 1),
        round(prose_ms, 1),
        round(costs[worst] / prose_ms, 2),
        "reported (adversarial input)",
        None,
    )


# Bodies a sender can write to make redaction slow; each of the first six was superlinear once (before
# their fixes, at 32-256 KB: 54 s, 149 s, 1.4 s, 9.7 s, 1.3 s and 4.5 s), "市区" cost 13 s per 32 KB
# under the first pattern written for addresses in CJK characters, and "Password: <b>" 36 s per 256 KB
# in detect-secrets' keyword patterns until long lines were read in pieces.
ADVERSARIAL_PIECES = (
    "0123 4567 ", "pass", "eyJ", "PuTTY-User-Key-File-2", "password=", "token:", "key=", 'pwd="',
    "市区", "시구로", "1.1.1.1 ", "is the password ", "Password: <b>",
    # what starts the eleventh and twelfth probes' detectors: a recovery phrase's words, an account's
    # name as a label, a correction, a token with an "@"
    "abandon ", "bank: ", "it's Ab1234x not ", "a:b@",
    # and the thirteenth's: a user and password joined by a colon, a password flag, a digit word read out
    "ab:Ab1!cdefgh ", "--xpass ", "cvv one ",
    # and the fourteenth's: a password as an argument, base32 in groups, a machine-readable zone; "mysql " cost
    # 65 s per 256 KB in the older command-line shape until its runs were bounded
    "mysql ", "a:a@tcp(", "('password', '", "htpasswd -b ", "ab2d ", "P<A<<", "[1,", "验证码",
    # and the sixteenth's and nineteenth's: a card's code and expiry, recovery codes, a table's header, a payment
    # handle, a lone digit between capitals, SQL tools' passwords
    "cvv 123 ", "exp 01/27 card ", "backup codes 1a2b3c ", "ssn,dob\n", "a@ybl ", "A1B2", "sqlcmd -P a ",
    "sshpass -p ",
)  # fmt: skip


def _adversarial_row(thorough: Redactor, rounds: int) -> Row:
    size = BODY_MAX_BYTES
    prose = (prose_emails()[0] * (size // 2048 + 1))[:size]
    prose_ms = per_email_us(thorough, [prose], rounds) / 1000
    costs = {}
    for piece in ADVERSARIAL_PIECES:
        body = (piece * (size // len(piece) + 1))[:size]
        costs[piece] = per_email_us(thorough, [body], rounds) / 1000
    figure = "redaction ms per {size} KB adversarial body (worst: {worst}) vs as much prose, thorough"
    return _worst_row(figure, "bodies", costs, prose_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 10")
    rows = run(parser.parse_args().quick)
    for r in rows:
        print(f"{r['figure']}\n  {r['memloop']} vs {r['baseline']} (baseline), ratio {r['ratio']}, "
              f"goal {r['goal']}: {'met' if r['met'] else 'reported' if r['met'] is None else 'MISSED'}")  # fmt: skip
    summary: dict[str, Any] = {r["figure"]: r["ratio"] for r in rows}
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
