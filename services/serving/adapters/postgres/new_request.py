"""A new request's rows (result, tool outcomes, content blob, outbox event, NOTIFY), and optionally
the COMMIT, in one pipelined round trip and one statement.

The tenant setting goes first, in the same pipeline, so RLS sees it before any insert. The rows go
in one data-modifying WITH statement: only the result's insert is unconditional (`ON CONFLICT DO
NOTHING`, the idempotency arbiter) and every other insert (and the NOTIFY) selects from the row it
RETURNED, so a replay writes nothing else. One statement instead of one per table: each statement
cost serving ~0.1 ms of CPU in psycopg (and PostgreSQL its own parse/bind/execute); the foreign key
from tool outcomes to the result is checked at the end of the statement, when the result row exists.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from typing import Any, Literal

import psycopg
from psycopg.pq import TransactionStatus

from services.serving.adapters.event_codec import encode_event
from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL
from services.serving.adapters.postgres.rows import attachment_row, outcome_row, result_row
from services.serving.domain.model import NewResult

_log = logging.getLogger(__name__)

Notify = Literal["commit", "after", "none"]
"""Where a new request's NOTIFY goes: in its transaction, in one of its own after the commit, or
nowhere (the caller wakes the relays some other way: `relay_waker`)."""


def add_new_request(
    conn: psycopg.Connection[Any],
    new: NewResult,
    *,
    with_event: bool,
    tenant_setting: str,
    commit: bool = False,
    notify: Notify = "commit",
) -> bool:
    """Send every row of `new` in one pipeline; True if the result row was inserted (not a replay).

    `tenant_setting` non-empty sends the RLS tenant setting first, in the same round trip. `commit`
    ends the transaction in that round trip too (a replay wrote nothing, so it commits nothing);
    a failed statement aborts the pipeline before the COMMIT, so nothing of a failed request is
    committed. On a connection with no transaction open, `commit` runs the statements as one
    implicit transaction ended by the pipeline's Sync (autocommit for the call, then restored).

    `notify="after"` (with `commit` and `with_event`): the relays' wake-up goes in a
    transaction of its own once the rows are committed, instead of in theirs. PostgreSQL commits
    every notifying transaction under one cluster-wide lock held until its commit record is
    flushed, so with the NOTIFY inside, serving's commits queued behind each other's WAL flushes
    one at a time (half of serving's waits at 50 req/s with the loop running: `Lock:object`,
    `bench/bench_serving_ab.py`). Outside, the rows' commits flush together (group commit) and the
    NOTIFY commits without waiting for its flush (it records nothing: a lost one is the relay's
    backstop poll). A replay notifies nobody, as before. `notify="none"` sends no NOTIFY at all.
    """
    after = commit and with_event and notify == "after"
    inside = with_event and notify != "none" and not after
    params = _request_params(new, with_event=with_event, notify=inside)
    # Committing a transaction that has not begun: no BEGIN (psycopg waits for its own round trip
    # before sending anything else) and no COMMIT, but the pipeline's one Sync ends the implicit
    # transaction PostgreSQL opens for the statements before it: one round trip, all or nothing.
    implicit = commit and not conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE
    if implicit:
        conn.autocommit = True
    try:
        with conn.cursor() as inserted, conn.cursor() as rest:
            with conn.pipeline():
                if tenant_setting:
                    rest.execute("SELECT set_config('memloop.tenant', %s, true)", (tenant_setting,))
                inserted.execute(_statement(bool(new.tool_outcomes), with_event, notify=inside), params)
                if commit and not implicit:
                    conn.commit()
            added = inserted.fetchone() is not None
    finally:
        if implicit:
            _leave_autocommit(conn)
    if added and after:
        _notify_relays(conn)
    return added


def _leave_autocommit(conn: psycopg.Connection[Any]) -> None:
    """Back to transactions, as the pool hands connections out; a connection that cannot be is
    closed, so that the pool replaces it rather than lend it in autocommit."""
    try:
        conn.autocommit = False
    except psycopg.Error:
        conn.close()


def _notify_relays(conn: psycopg.Connection[Any]) -> None:
    """NOTIFY in a transaction of its own that does not wait for its WAL flush (nothing depends on
    its durability). A failure is logged, not raised: the request is committed, and the relay's
    backstop poll finds the row."""
    try:
        with conn.pipeline(), conn.cursor() as cursor:
            cursor.execute(_NOTIFY, {"channel": NOTIFY_CHANNEL})
            conn.commit()
    except psycopg.Error as exc:
        _log.warning("waking the relays after a commit failed (%s); their poll will find the event", exc)
        with contextlib.suppress(psycopg.Error):
            conn.rollback()


_NOTIFY = "SELECT set_config('synchronous_commit', 'off', true), pg_notify(%(channel)s, '')"


_INSERT_RESULT = """
    INSERT INTO results (result_id, tenant, request_id, user_id, thread, route, procedure_versions,
                         feedback_ref, reply, content_ref, event_id, trace_id, committed_at)
    VALUES (%(result_id)s, %(tenant)s, %(request_id)s, %(user_id)s, %(thread)s, %(route)s, CAST(%(pv)s AS jsonb),
            %(feedback_ref)s, %(reply)s, %(content_ref)s, %(event_id)s, %(trace_id)s, %(committed_at)s)
    ON CONFLICT ON CONSTRAINT results_tenant_request_key DO NOTHING
    RETURNING result_id, tenant, request_id
"""
_INSERT_OUTCOMES = """
    INSERT INTO tool_outcomes (tenant, request_id, ordinal, tool, status, ref, summary)
    SELECT r.tenant, r.request_id, o.ordinal, o.tool, o.status, o.ref, o.summary
    FROM r, unnest(CAST(%(o_ordinals)s AS integer[]), CAST(%(o_tools)s AS text[]), CAST(%(o_statuses)s AS text[]),
                   CAST(%(o_refs)s AS text[]), CAST(%(o_summaries)s AS text[]))
         AS o(ordinal, tool, status, ref, summary)
"""
_INSERT_CONTENT = """
    INSERT INTO content_blobs (content_ref, tenant, user_id, request_id, from_address, to_address,
                               subject, body, attachments, from_owner)
    SELECT %(c_content_ref)s, r.tenant, %(c_user_id)s, %(c_request_id)s, %(c_from_address)s, %(c_to_address)s,
           %(c_subject)s, %(c_body)s, CAST(%(c_attachments)s AS jsonb), CAST(%(c_from_owner)s AS boolean)
    FROM r
"""
_INSERT_OUTBOX = """
    INSERT INTO outbox (event_id, tenant, request_id, trace_id, span_id, payload)
    SELECT CAST(%(e_event_id)s AS uuid), r.tenant, %(e_request_id)s, %(e_trace_id)s, %(e_span_id)s,
           CAST(%(e_payload)s AS bytea)
    FROM r
"""


@functools.cache
def _statement(with_outcomes: bool, with_event: bool, *, notify: bool) -> str:
    """The one statement for a request's shape (a few texts, each prepared by psycopg once used often)."""
    parts = [f"r AS ({_INSERT_RESULT})"]
    if with_outcomes:
        parts.append(f"o AS ({_INSERT_OUTCOMES})")
    parts.append(f"c AS ({_INSERT_CONTENT})")
    if with_event:
        parts.append(f"e AS ({_INSERT_OUTBOX})")
    wake = ", pg_notify(%(channel)s, '')" if notify else ""
    return f"WITH {', '.join(parts)} SELECT r.result_id{wake} FROM r"


def _request_params(new: NewResult, *, with_event: bool, notify: bool) -> dict[str, Any]:
    """The parameters of the statement: the result's row, then each other table's, prefixed."""
    c = new.content
    outcomes = [outcome_row(o) for o in new.tool_outcomes]
    params = {
        **result_row(new),
        "o_ordinals": list(range(len(outcomes))),
        "o_tools": [o["tool"] for o in outcomes],
        "o_statuses": [o["status"] for o in outcomes],
        "o_refs": [o["ref"] for o in outcomes],
        "o_summaries": [o["summary"] for o in outcomes],
        "c_content_ref": c.content_ref,
        "c_user_id": c.user,
        "c_request_id": c.request_id,
        "c_from_address": c.email.from_address,
        "c_to_address": c.email.to_address,
        "c_subject": c.email.subject,
        "c_body": c.email.body,
        "c_attachments": json.dumps([attachment_row(a) for a in c.attachments]),
        "c_from_owner": c.from_owner,
    }
    if with_event:
        e = new.event
        params |= {
            "e_event_id": e.event_id,
            "e_request_id": e.request_id,
            "e_trace_id": e.trace_id,
            "e_span_id": new.span_id,
            "e_payload": encode_event(e),
        }
    if notify:
        params["channel"] = NOTIFY_CHANNEL
    return params
