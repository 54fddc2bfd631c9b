"""Serving's write transaction: one pipelined round trip vs one round trip per statement.

Not a test: prints figures. Both sides run the same `prepare_result` rows through serving's real
PostgreSQL unit of work on the same embedded PostgreSQL in one run:

- baseline: the tenant setting, then the result, tool outcomes, content, outbox row and NOTIFY each
  as its own statement (serving's transaction before issue 15: about eight round trips);
- memloop: `add_new_request`, the tenant setting and every insert in one pipeline, then COMMIT.

    .venv/bin/python bench/bench_serving_tx.py [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from bench._harness import pct
from services.common.db import make_engine, run_migrations, url_for_role
from services.common.infra.postgres import EmbeddedPostgres, create_database
from services.serving.adapters.repository import SqlServingUnitOfWork
from services.serving.bootstrap import MIGRATIONS_DIR
from services.serving.domain.model import Email, HandleRequestCommand, NewResult, ToolOutcome
from services.serving.service.use_cases import prepare_result


def _new(i: int, tag: str) -> NewResult:
    command = HandleRequestCommand(
        request_id=f"{tag}-{i}",
        tenant="acme",
        user="alice",
        thread="thr",
        route="calendar.schedule",
        procedure_versions={"schedule_meeting": "3"},
        tool_outcomes=(ToolOutcome("calendar.create_event", "ok", "cal-1", "done"),),
        feedback_ref="",
        content=Email("bob@partner.example", "alice@acme.example", "Meeting", "Can we meet Tuesday at 10?"),
        attachments=(),
        reply="Booked.",
        owner_address="",
        trace_id="ab" * 16,
    )
    return prepare_result(command, lambda text: text, datetime.now(UTC))


def _per_statement(uow: SqlServingUnitOfWork, new: NewResult) -> None:
    assert uow.results.add_if_new(new)
    uow.results.add_tool_outcomes(new.result.request_id, new.tool_outcomes)
    uow.contents.add(new.content)
    uow.outbox.add(new.event, span_id=new.span_id)
    uow.commit()


def _pipelined(uow: SqlServingUnitOfWork, new: NewResult) -> None:
    assert uow.add_new_request(new, with_event=True)
    uow.commit()


def _run(
    sessions: sessionmaker[Session], write: Callable[[SqlServingUnitOfWork, NewResult], None], n: int, tag: str
) -> list[float]:
    times = []
    rows = [_new(i, tag) for i in range(n)]
    for new in rows:
        start = time.perf_counter()
        with SqlServingUnitOfWork(sessions, "acme") as uow:
            write(uow, new)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    n = 300 if parser.parse_args().quick else 2000
    root = Path(tempfile.mkdtemp(prefix="memloop-bench-servtx-"))
    postgres = EmbeddedPostgres(root / "pg", durable=False, log_path=root / "postgres.log")
    try:
        postgres.start()
        admin_url = create_database(postgres.admin_url, "serving_tx")
        run_migrations(admin_url, MIGRATIONS_DIR, app_role="memloop_serving_app")
        engine = make_engine(url_for_role(admin_url, "memloop_serving_app"), pool_size=2)
        sessions = sessionmaker(engine, expire_on_commit=False)
        _run(sessions, _per_statement, 50, "warm-a")
        _run(sessions, _pipelined, 50, "warm-b")
        results: dict[str, list[float]] = {"per_statement": [], "pipelined": []}
        for round_ in range(4):  # interleaved so load drifts hit both sides
            results["per_statement"] += _run(sessions, _per_statement, n // 4, f"a{round_}")
            results["pipelined"] += _run(sessions, _pipelined, n // 4, f"b{round_}")
        base, new = results["per_statement"], results["pipelined"]
        for name, values in results.items():
            print(f"{name:14s} n={len(values)} p50={pct(values, 50):.3f} ms p99={pct(values, 99):.3f} ms")
        p50, p99 = pct(new, 50) / pct(base, 50), pct(new, 99) / pct(base, 99)
        print(f"ratio pipelined/per_statement: p50 {p50:.2f}  p99 {p99:.2f}")
        engine.dispose()
    finally:
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
