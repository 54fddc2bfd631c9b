"""In-memory serving storage with the same behaviour as PostgreSQL, for unit tests of the use cases.

A unit of work takes the store's lock for its whole life (so concurrent calls serialise the way a
unique constraint makes them wait), works on a copy, and publishes the copy only on `commit()`:
anything not committed is gone, as with a rolled-back transaction. Tenant scoping mirrors RLS.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import TracebackType
from typing import Self

from services.serving.adapters.event_codec import encode_event, without_summaries
from services.serving.domain.model import (
    ContentDeletion,
    ForgottenRequest,
    LearningEventRecord,
    NewResult,
    OutboxState,
    OutboxStatus,
    StoredContent,
    StoredResult,
    ToolOutcome,
)


@dataclass
class _Tables:
    results: dict[tuple[str, str], StoredResult] = field(default_factory=dict)
    tool_outcomes: dict[tuple[str, str], tuple[ToolOutcome, ...]] = field(default_factory=dict)
    contents: dict[str, StoredContent] = field(default_factory=dict)
    deletions: dict[tuple[str, str, str], ContentDeletion] = field(default_factory=dict)
    outbox: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)
    notifications: int = 0


class InMemoryServingStore:
    """The "database": committed tables plus the lock that serialises units of work."""

    def __init__(self) -> None:
        self.tables = _Tables()
        self.lock = threading.RLock()

    def unit_of_work(self, tenant: str) -> InMemoryServingUnitOfWork:
        return InMemoryServingUnitOfWork(self, tenant)


class _Results:
    def __init__(self, tables: _Tables, tenant: str) -> None:
        self._t, self._tenant = tables, tenant

    def add_if_new(self, new: NewResult) -> bool:
        key = (self._tenant, new.result.request_id)
        if key in self._t.results:
            return False
        self._t.results[key] = new.result
        return True

    def add_tool_outcomes(self, request_id: str, outcomes: tuple[ToolOutcome, ...]) -> None:
        if outcomes:
            self._t.tool_outcomes[(self._tenant, request_id)] = outcomes

    def get(self, request_id: str) -> StoredResult | None:
        return self._t.results.get((self._tenant, request_id))

    def forget_text(self, *, content_ref: str = "", event_id: str = "") -> ForgottenRequest | None:
        for key, result in self._t.results.items():
            if key[0] == self._tenant and (
                result.content_ref == content_ref if content_ref else result.event_id == event_id
            ):
                self._t.results[key] = replace(result, reply="")
                outcomes = self._t.tool_outcomes.get(key, ())
                self._t.tool_outcomes[key] = tuple(replace(o, summary="") for o in outcomes)
                return ForgottenRequest(result.request_id, result.content_ref)
        return None


class _Contents:
    def __init__(self, tables: _Tables, tenant: str) -> None:
        self._t, self._tenant = tables, tenant

    def add(self, content: StoredContent) -> None:
        self._t.contents[content.content_ref] = content

    def get(self, content_ref: str) -> StoredContent | None:
        found = self._t.contents.get(content_ref)
        return found if found is not None and found.tenant == self._tenant else None

    def get_many(self, content_refs: Sequence[str]) -> dict[str, StoredContent]:
        found = {ref: self.get(ref) for ref in content_refs}
        return {ref: content for ref, content in found.items() if content is not None}

    def tenant_known(self) -> bool:
        return any(tenant == self._tenant for tenant, _ in self._t.results)

    def delete(self, content_ref: str) -> bool:
        if self.get(content_ref) is None:
            return False
        del self._t.contents[content_ref]
        return True

    def record_deletion(self, deletion: ContentDeletion) -> None:
        self._t.deletions.setdefault((deletion.tenant, deletion.content_ref, deletion.deletion_id), deletion)


class _Outbox:
    def __init__(self, tables: _Tables, tenant: str) -> None:
        self._t, self._tenant = tables, tenant

    def add(self, event: LearningEventRecord, *, span_id: str) -> None:
        if any(t == event.tenant and r == event.request_id for t, r, _ in self._t.outbox.values()):
            raise RuntimeError("outbox_tenant_request_key violated")
        self._t.outbox[event.event_id] = (event.tenant, event.request_id, encode_event(event))
        self._t.notifications += 1

    def get(self, *, event_id: str = "", request_id: str = "") -> OutboxStatus | None:
        for key, (tenant, req, payload) in self._t.outbox.items():
            if tenant == self._tenant and (key == event_id if event_id else req == request_id):
                return OutboxStatus(payload=payload, state=OutboxState.PENDING)
        return None

    def forget_text(self, request_id: str) -> bool:
        for key, (tenant, req, payload) in self._t.outbox.items():
            if tenant == self._tenant and req == request_id:
                scrubbed = without_summaries(payload)
                self._t.outbox[key] = (tenant, req, scrubbed)
                return scrubbed != payload
        return False


class InMemoryServingUnitOfWork:
    results: _Results
    contents: _Contents
    outbox: _Outbox

    def __init__(self, store: InMemoryServingStore, tenant: str) -> None:
        self._store = store
        self._tenant = tenant
        self._working: _Tables | None = None

    def __enter__(self) -> Self:
        self._store.lock.acquire()
        self._working = copy.deepcopy(self._store.tables)
        self.results = _Results(self._working, self._tenant)
        self.contents = _Contents(self._working, self._tenant)
        self.outbox = _Outbox(self._working, self._tenant)
        return self

    def commit(self) -> None:
        if self._working is None:
            raise RuntimeError("unit of work used outside its `with` block")
        self._store.tables = self._working

    def delete_contents(self, content_refs: list[str], event_ids: list[str], deletion_id: str, now: datetime) -> int:
        """The single deletion's steps, item by item (PostgreSQL does the same set-based)."""
        deleted = 0
        keys = [("content_ref", ref) for ref in content_refs] + [("event_id", e) for e in event_ids]
        for column, key in keys:
            request = self.results.forget_text(**{column: key})
            ref = key if column == "content_ref" else (request.content_ref if request is not None else "")
            if not ref:
                continue
            existed = self.contents.delete(ref)
            deleted += existed
            if request is not None:
                self.outbox.forget_text(request.request_id)
            self.contents.record_deletion(ContentDeletion(self._tenant, ref, deletion_id, now, existed))
        return deleted

    def add_new_request(self, new: NewResult, *, with_event: bool, commit: bool = False) -> bool:
        """The same rows as PostgreSQL's single round trip, through the repositories."""
        if not self.results.add_if_new(new):
            return False
        self.results.add_tool_outcomes(new.result.request_id, new.tool_outcomes)
        self.contents.add(new.content)
        if with_event:
            self.outbox.add(new.event, span_id=new.span_id)
        if commit:
            self.commit()
        return True

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._working = None
        self._store.lock.release()
