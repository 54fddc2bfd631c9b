"""The learned-procedures use cases over an in-memory unit of work: what the service layer adds to the
pure domain (transactions, retry after a lost race, request ids, the backfill's partition of
intents, the review path's intent keys and refusals, and paging of the runtime read).

The fake keeps the database's promises that matter here: writes are visible only after commit,
and an insert or update that would leave two active rows for one intent raises
SupersessionConflict, as the partial unique index does.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import pytest

from services.common.vocabulary import Candidate, MemoryType, Origin, Sensitivity
from services.memory.core.domain.audit import AuditEntry
from services.memory.core.domain.errors import RequestIdReused, SupersessionConflict
from services.memory.core.service.pagination import page_request
from services.memory.core.service.ports import Transition
from services.memory.procedures.domain.backfill import plan_backfill
from services.memory.procedures.domain.errors import ProcedureNotAdmissible, ProcedureSuppresses
from services.memory.procedures.domain.procedures import (
    LearnedProcedure,
    ProcedureKind,
    ProcedureSource,
    ProcedureStatus,
    SaveProcedure,
)
from services.memory.procedures.service import procedures as uc
from services.memory.procedures.service.backfill import INTENT_HELD, backfill_procedures
from services.memory.procedures.service.ports import ProcedureFilter
from tests.fixtures import fixture_path

FIXTURE = fixture_path("legacy_learned_procedures.json")
T0 = datetime(2026, 7, 7, 9, 0, tzinfo=UTC)


@dataclass
class Store:
    """What the fake database holds, shared by every unit of work of a test."""

    rows: dict[str, LearnedProcedure] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)
    requests: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    conflicts_to_inject: int = 0


class FakeProcedures:
    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, procedure_id: str, *, lock: bool = False) -> LearnedProcedure | None:
        return self._store.rows.get(procedure_id)

    def active_for_intent(self, intent_key: str, *, lock: bool) -> LearnedProcedure | None:
        return next((p for p in self._sorted() if p.intent_key == intent_key and _active(p)), None)

    def max_version(self, intent_key: str) -> int:
        return max((p.version for p in self._store.rows.values() if p.intent_key == intent_key), default=0)

    def of_intents(self, intent_keys: Collection[str]) -> list[LearnedProcedure]:
        return sorted((p for p in self._store.rows.values() if p.intent_key in intent_keys), key=_version_order)

    def add(self, procedure: LearnedProcedure) -> None:
        if self._store.conflicts_to_inject:
            self._store.conflicts_to_inject -= 1
            raise SupersessionConflict("injected: another transaction won the race")
        self._check_one_active(procedure)
        self._store.rows[procedure.id] = procedure
        self._store.order[procedure.id] = len(self._store.order) + 1

    def update_lifecycle(self, procedure: LearnedProcedure) -> None:
        self._check_one_active(procedure)
        current = self._store.rows[procedure.id]
        self._store.rows[procedure.id] = replace(
            current,
            status=procedure.status,
            version=procedure.version,
            supersedes_id=procedure.supersedes_id,
            superseded_by_id=procedure.superseded_by_id,
            updated_at=procedure.updated_at,
        )

    def page(self, where: ProcedureFilter, *, after_row_id: int, limit: int) -> list[tuple[int, LearnedProcedure]]:
        rows = [
            (self._store.order[p.id], p)
            for p in self._sorted()
            if self._store.order[p.id] > after_row_id
            and (where.kind is None or p.kind is where.kind)
            and (where.status is None or p.status is where.status)
        ]
        return rows[:limit]

    def _sorted(self) -> list[LearnedProcedure]:
        return sorted(self._store.rows.values(), key=lambda p: self._store.order[p.id])

    def _check_one_active(self, procedure: LearnedProcedure) -> None:
        if _active(procedure) and any(
            _active(p) and p.intent_key == procedure.intent_key and p.id != procedure.id
            for p in self._store.rows.values()
        ):
            raise SupersessionConflict("ux_learned_proc_active_intent")


class FakeAudit:
    def __init__(self, store: Store) -> None:
        self._store = store

    def add(self, entry: AuditEntry) -> None:
        self._store.audit.append(entry)


class FakeRequests:
    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        return self._store.requests.get(request_id)

    def record(self, request_id: str, *, operation: str, result: dict[str, Any]) -> None:
        self._store.requests[request_id] = (operation, result)


class FakeUnitOfWork:
    """Works on a copy of the store; `commit()` publishes it, leaving without commit discards it."""

    def __init__(self, committed: Store) -> None:
        self._committed = committed

    def __enter__(self) -> FakeUnitOfWork:
        self._work = copy.deepcopy(self._committed)
        self.procedures = FakeProcedures(self._work)
        self.audit = FakeAudit(self._work)
        self.requests = FakeRequests(self._work)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._committed.conflicts_to_inject = self._work.conflicts_to_inject

    def commit(self) -> None:
        self._committed.__dict__.update(self._work.__dict__)

    def lock(self, key: str) -> None:
        """Single-threaded tests: nothing to wait for."""


class NoMetrics:
    def __init__(self) -> None:
        self.retries = 0

    def conflict_retried(self) -> None:
        self.retries += 1

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _active(p: LearnedProcedure) -> bool:
    return p.status is ProcedureStatus.ACTIVE


def _version_order(p: LearnedProcedure) -> tuple[str, int]:
    return p.intent_key, p.version


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def ports(store: Store) -> uc.ProcedurePorts:
    return uc.ProcedurePorts(uow=lambda tenant: FakeUnitOfWork(store), metrics=NoMetrics(), clock=lambda: T0)


def a_save(**overrides: Any) -> SaveProcedure:
    fields: dict[str, Any] = {
        "tenant": "pilot",
        "intent_key": "psp_merchants.newly_incorporated",
        "title": "Newly incorporated PSP merchants",
        "kind": ProcedureKind.SUBSTANTIVE,
        "scope": "PSP merchants",
        "trigger": "incorporated less than 3 months ago",
        "action": "request 3 months of bank statements",
    }
    return SaveProcedure(**{**fields, **overrides})


def a_candidate(text: str, intent_key: str = "") -> Candidate:
    return Candidate(
        candidate_key=uuid.uuid4().hex,
        type=MemoryType.PROCEDURAL,
        origin=Origin.OWNER,
        sensitivity=Sensitivity.NORMAL,
        confidence=0.9,
        text=text,
        event_id="evt-1",
        trace_id="",
        intent_key=intent_key,
    )


def test_a_lost_race_is_retried_in_a_fresh_transaction_and_leaves_one_active(
    ports: uc.ProcedurePorts, store: Store
) -> None:
    # Given: an active rule, and a save whose first two attempts lose the one-active race
    first = uc.save_canonical(a_save(), ports, actor="kim").saved
    store.conflicts_to_inject = 2
    # When: the refinement is saved
    plan = uc.save_canonical(a_save(action="request 6 months of bank statements"), ports, actor="kim")
    # Then: the third attempt wrote it once, superseding the first; the lost attempts left nothing
    assert ports.metrics.retries == 2  # type: ignore[attr-defined]
    assert plan.superseded is not None and plan.superseded.id == first.id
    assert [(p.version, p.status) for p in store.rows.values()] == [
        (1, ProcedureStatus.SUPERSEDED),
        (2, ProcedureStatus.ACTIVE),
    ]
    assert [e.action.value for e in store.audit] == [
        "learned_procedure.saved",
        "learned_procedure.superseded",
        "learned_procedure.saved",
    ]


def test_a_request_id_repeats_the_first_answer_and_refuses_another_change(
    ports: uc.ProcedurePorts, store: Store
) -> None:
    # Given: a save made with a request id
    first = uc.save_canonical(a_save(), ports, actor="kim", request_id="req-1")
    # When: it is repeated, then the id is used for another change
    again = uc.save_canonical(a_save(), ports, actor="kim", request_id="req-1")
    with pytest.raises(RequestIdReused):
        uc.save_canonical(a_save(action="request 6 months of statements"), ports, actor="kim", request_id="req-1")
    # Then: one row, one audit event, and the repeat answered with it
    assert again.saved == first.saved and len(store.rows) == 1 and len(store.audit) == 1


def test_the_guard_refuses_before_any_transaction_writes(ports: uc.ProcedurePorts, store: Store) -> None:
    with pytest.raises(ProcedureSuppresses) as refused:
        uc.save_canonical(a_save(action="do not escalate PEP matches"), ports, actor="kim")
    assert refused.value.field == "action" and store.rows == {} and store.audit == []


def test_backfill_leaves_an_intent_the_store_already_holds_and_reports_its_rules(
    ports: uc.ProcedurePorts, store: Store
) -> None:
    # Given: the legacy fixture, and an officer who saved the substantive intent before the backfill
    rules = json.loads(FIXTURE.read_text())["block"]["rules"]
    planned = {row.intent_key for row in plan_backfill("pilot", rules).rows}
    substantive = next(key for key in planned if key.startswith("psp"))
    officer = uc.save_canonical(a_save(intent_key=substantive), ports, actor="kim").saved
    # When: the backfill runs, twice
    first = backfill_procedures("pilot", rules, ports, actor="root")
    second = backfill_procedures("pilot", rules, ports, actor="root")
    # Then: only the governance chain was imported; the officer's rule stays the one active row
    assert (first.inserted, first.already_present) == (2, 0)
    assert [(r.index, r.reason) for r in first.refused] == [(0, INTENT_HELD), (1, INTENT_HELD), (2, INTENT_HELD)]
    assert officer.id in first.refused[0].detail
    assert sorted(p.id for p in first.active) == sorted(
        [officer.id, next(p.id for p in first.active if p.kind is ProcedureKind.GOVERNANCE)]
    )
    # Then: the second run is the same, with nothing new written or audited
    assert (second.inserted, second.already_present, second.refused) == (0, 2, first.refused)
    assert [e.action.value for e in store.audit].count("learned_procedure.backfilled") == 2


def test_save_from_learning_keeps_a_valid_intent_and_derives_one_otherwise(
    ports: uc.ProcedurePorts, store: Store
) -> None:
    # Given: a reviewer's transition inside a review's unit of work
    by = Transition(event_id="evt-1", trace_id="t" * 32, actor="rita", now=T0)
    with ports.uow("pilot") as uow:
        # When: approved candidates with a memory-style key, with none, and the same text again
        keyed = uc.save_from_learning(
            uow,
            a_candidate("Escalate new PSP merchants", "psp:escalation"),
            tenant="pilot",
            user="al",
            review_item_id="r1",
            by=by,
        ).saved
        derived = uc.save_from_learning(
            uow, a_candidate("CC my manager on invites"), tenant="pilot", user="al", review_item_id="r2", by=by
        ).saved
        again = uc.save_from_learning(
            uow, a_candidate("cc my manager on invites!"), tenant="pilot", user="al", review_item_id="r3", by=by
        )
        uow.commit()
    # Then: ':' reads as '.', a missing key comes from the text's meaning, so a repeat supersedes
    assert keyed.intent_key == "psp.escalation" and derived.intent_key.startswith("learned.")
    assert again.superseded is not None and again.superseded.id == derived.id and again.saved.version == 2
    assert {p.source for p in store.rows.values()} == {ProcedureSource.SLEEPTIME_CONSOLIDATION}
    assert keyed.created_by == "rita" and keyed.details == {"review_item_id": "r1", "event_id": "evt-1", "user": "al"}


def test_save_from_learning_refuses_a_suppressing_candidate_as_a_failed_precondition(
    ports: uc.ProcedurePorts,
) -> None:
    by = Transition(event_id="evt-1", trace_id="", actor="rita", now=T0)
    with ports.uow("pilot") as uow, pytest.raises(ProcedureNotAdmissible) as refused:
        uc.save_from_learning(
            uow, a_candidate("skip sanctions screening"), tenant="pilot", user="al", review_item_id="r", by=by
        )
    assert refused.value.reason == "NEVER_SUPPRESS" and "skip_screening" in refused.value.message


def test_applicable_pages_scan_past_batches_of_rules_that_do_not_match(ports: uc.ProcedurePorts) -> None:
    # Given: 450 active crypto rules with three PSP rules among them
    for k in range(450):
        scope = "PSP merchants" if k in (5, 260, 449) else "crypto exchanges"
        uc.save_canonical(a_save(intent_key=f"rule.n{k}", scope=scope), ports, actor="kim")
    # When: a PSP case is read two rules per page
    page = page_request(2, "", default=50, maximum=500, filters=("pilot", "PSP"))
    first = uc.list_applicable("pilot", "PSP merchant", page, ports)
    rest = uc.list_applicable(
        "pilot",
        "PSP merchant",
        page_request(2, first.next_page_token, default=50, maximum=500, filters=("pilot", "PSP")),
        ports,
    )
    # Then: the three PSP rules, in order, across two pages
    assert [p.intent_key for p in [*first.items, *rest.items]] == ["rule.n5", "rule.n260", "rule.n449"]
    assert first.next_page_token and rest.next_page_token == ""
