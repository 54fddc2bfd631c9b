"""Consolidation: memories destroyed by the write-back (replace vs merge) and job time at scale.

Not a test: prints figures. Part 1 races one turn of the Priya conversation
(`tests/fixtures/priya_sessions.json`) against every position a job can be in — before read,
after read, during compute, before each write-back operation — with the naive replace write-back
and with the merge against a snapshot, and counts memories destroyed: live in the serialised run
(same write-back, job then turn) and not live in the raced one. Part 2 times one job (pure, in
memory: read, consolidate, plan, apply) for a synthetic user built from variations of the corpus.

    .venv/bin/python bench/bench_consolidation.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from services.common.vocabulary import MemoryType, Origin, candidate_key
from services.memory.consolidation.domain.consolidation import consolidate, plan_write_back, read_snapshot
from services.memory.core.domain.model import MemoryRecord, MemoryStatus
from tests.fixtures import fixture_path
from tests.harness.consolidation_store import InMemoryMemoryStore, WriteBackMode, race_every_position

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURE = fixture_path("priya_sessions.json")
T0 = datetime(2025, 1, 6, tzinfo=UTC)
_PREFERENCE_WORDS = ("prefers", "likes", "enjoys", "dislikes", "wants")


def memory(memory_id: str, text: str, at: datetime, event_id: str, user: str = "priya") -> MemoryRecord:
    kind = MemoryType.PREFERENCE if any(w in text for w in _PREFERENCE_WORDS) else MemoryType.FACT
    return MemoryRecord(
        memory_id=memory_id,
        tenant="northwind",
        user=user,
        type=kind,
        text=text,
        status=MemoryStatus.ACTIVE,
        confidence=0.7,
        origin=Origin.OWNER,
        candidate_key=candidate_key("northwind", user, kind, text),
        trace_id=f"trace-{event_id}",
        policy_version="bench",
        created_at=at,
        updated_at=at,
        source_event_ids=(event_id,),
    )


def priya_turns() -> list[MemoryRecord]:
    """One turn per memory, a minute apart inside a session, sessions a day apart."""
    sessions = json.loads(FIXTURE.read_text())["sessions"]
    return [
        memory(
            f"mem-s{s['session']:02d}-{i}",
            text,
            T0 + timedelta(days=s["session"], minutes=i),
            f"evt-{s['session']}-{i}",
        )
        for s in sessions
        for i, text in enumerate(s["memories"])
    ]


def race_everywhere(mode: WriteBackMode) -> tuple[int, int]:
    """(races, memories destroyed) over every turn against every job position."""
    races = destroyed = 0
    for case in race_every_position(priya_turns(), mode=mode):
        races += 1
        destroyed += len(case.destroyed())
    return races, destroyed


_COMPANIES = ["Northwind Labs", "Calico Systems"] + [f"Vendor{k} Systems" for k in range(400)]
_CITIES = ["Lisbon", "Porto"] + [f"City{k}" for k in range(300)]
_PEOPLE = ["Omar", "Omar Haddad", "Dana"] + [f"Person{k}" for k in range(300)]
_THINGS = ["Rust", "hiking", "billing", "chess"] + [f"topic{k}" for k in range(2000)]
_SUBJECTS = ["Priya"] * 40 + [f"Colleague{k}" for k in range(60)]
_TEMPLATES = [
    "{s} works at {company}",
    "{s} is a {level} engineer",
    "{s} is a {level} engineer at {company}",
    "{s} prefers {sync} standups",
    "{s} {likes} {thing} {at} weekends",
    "{s}'s manager is {person}",
    "{s} is learning {thing}",
    "{s} lives in {city}",
    "{s}'s team ships the {thing} service",
    "{s} takes Fridays off in {month}",
    "{s} prefers written updates to {thing} meetings",
    "{s}'s team owns {thing}",
    "{s} is mentoring {n} junior engineers",
    "{s} dislikes {day} meetings",
    "{s} is leaving {company}",
    "{s} is starting at {company} in {month} as a {level} engineer",
    "{s} is moving to {city}",
    "{s} wants a farewell lunch with the {thing} team",
    "{s}'s new manager at {company} is {person}",
]


def synthetic_user(n: int, seed: int = 7) -> list[MemoryRecord]:
    """`n` memories for one user: the corpus's sentence shapes over larger vocabularies, with about a
    third restating an earlier memory in a synonym wording (async/asynchronous, likes/enjoys)."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(n):
        if texts and rng.random() < 0.35:
            texts.append(texts[rng.randrange(len(texts))].replace("asynchronous", "async").replace("likes", "enjoys"))
            continue
        texts.append(
            rng.choice(_TEMPLATES).format(
                s=rng.choice(_SUBJECTS),
                company=rng.choice(_COMPANIES),
                level=rng.choice(["senior", "staff", "principal"]),
                sync=rng.choice(["async", "asynchronous"]),
                likes=rng.choice(["likes", "enjoys"]),
                at=rng.choice(["at", "on"]),
                thing=rng.choice(_THINGS),
                person=rng.choice(_PEOPLE),
                city=rng.choice(_CITIES),
                month=rng.choice(["January", "August", "May"]),
                n=rng.choice(["two", "three"]),
                day=rng.choice(["Monday", "Friday"]),
            )
        )
    return [memory(f"mem-{i:07d}", text, T0 + timedelta(seconds=i), f"evt-{i}") for i, text in enumerate(texts)]


def time_job(n: int) -> dict[str, float]:
    store = InMemoryMemoryStore(synthetic_user(n))
    figures: dict[str, float] = {"n": n}
    start = time.perf_counter()
    snapshot = read_snapshot(store.all_active())
    figures["read"] = time.perf_counter() - start
    start = time.perf_counter()
    output = consolidate(snapshot.memories)
    figures["consolidate"] = time.perf_counter() - start
    start = time.perf_counter()
    plan = plan_write_back(snapshot, output, store.active_ids())
    figures["plan"] = time.perf_counter() - start
    start = time.perf_counter()
    store.apply(plan, now=T0)
    figures["apply"] = time.perf_counter() - start
    figures["total"] = figures["read"] + figures["consolidate"] + figures["plan"] + figures["apply"]
    figures["kept"], figures["retired"], figures["review"] = plan.kept, plan.retired, len(plan.to_review)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 1e3 and 1e4 instead of 1e4 and 1e5")
    args = parser.parse_args()

    print(f"Racing one turn against every job position, Priya corpus ({len(priya_turns())} turns)")
    print(f"{'write-back':<12}{'races':>8}{'memories destroyed':>22}")
    for mode in (WriteBackMode.REPLACE, WriteBackMode.MERGE):
        races, destroyed = race_everywhere(mode)
        print(f"{mode.value:<12}{races:>8}{destroyed:>22}")

    sizes = (1_000, 10_000) if args.quick else (10_000, 100_000)
    print("\nOne job, in memory, synthetic user (seconds)")
    header = ("memories", "read", "consolidate", "plan", "apply", "total", "kept", "retired", "review")
    print("".join(f"{h:>12}" for h in header))
    rows = [time_job(n) for n in sizes]
    for row in rows:
        timings = "".join(f"{row[k]:>12.3f}" for k in ("read", "consolidate", "plan", "apply", "total"))
        counts = "".join(f"{int(row[k]):>12}" for k in ("kept", "retired", "review"))
        print(f"{int(row['n']):>12}{timings}{counts}")
    small, large = rows
    print(
        f"\nratio {int(large['n'])}/{int(small['n'])}: memories x{large['n'] / small['n']:.0f}, "
        f"job time x{large['total'] / small['total']:.1f}"
    )


if __name__ == "__main__":
    main()
