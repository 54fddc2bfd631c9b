"""A new request's rows (result, tool outcomes, content blob, outbox event, NOTIFY), and optionally
the COMMIT, in one pipelined round trip.

The statements run in order on the server, so RLS sees the tenant before any insert. Only the
result's insert is unconditional (`ON CONFLICT DO NOTHING`, the idempotency arbiter); each later
insert (and the NOTIFY) is guarded by that very result row existing, so a replay writes nothing else.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from services.serving.adapters.event_codec import encode_event
from services.serving.adapters.postgres.outbox import NOTIFY_CHANNEL
from services.serving.adapters.postgres.rows import attachment_row, outcome_row, result_row
from services.serving.domain.model import NewResult


def add_new_request(
    conn: psycopg.Connection[Any], new: NewResult, *, with_event: bool, tenant_setting: str, commit: bool = False
) -> bool:
    """Send every statement of `new` in one pipeline; True if the result row was inserted (not a replay).

    `tenant_setting` non-empty sends the RLS tenant setting first, in the same round trip. `commit`
    ends the transaction in that round trip too (a replay's guarded inserts wrote nothing, so it
    commits nothing); any failed statement aborts the pipeline before the COMMIT, so nothing of a
    failed request is committed.
    """
    rows = _request_rows(new)
    with conn.cursor() as inserted, conn.cursor() as rest:
        with conn.pipeline():
            if tenant_setting:
                rest.execute("SELECT set_config('memloop.tenant', %s, true)", (tenant_setting,))
            inserted.execute(_INSERT_RESULT, rows["result"])
            if new.tool_outcomes:
                rest.executemany(_INSERT_OUTCOME, rows["outcomes"])
            rest.execute(_INSERT_CONTENT, rows["content"])
            if with_event:
                rest.execute(_INSERT_OUTBOX, rows["outbox"])
                rest.execute(_NOTIFY, {**rows["guard"], "channel": NOTIFY_CHANNEL})
            if commit:
                conn.commit()
        return inserted.fetchone() is not None


_GUARD = "WHERE EXISTS (SELECT 1 FROM results WHERE tenant = %(tenant)s AND result_id = CAST(%(result_id)s AS uuid))"
_INSERT_RESULT = """
    INSERT INTO results (result_id, tenant, request_id, user_id, thread, route, procedure_versions,
                         feedback_ref, reply, content_ref, event_id, trace_id, committed_at)
    VALUES (%(result_id)s, %(tenant)s, %(request_id)s, %(user_id)s, %(thread)s, %(route)s, CAST(%(pv)s AS jsonb),
            %(feedback_ref)s, %(reply)s, %(content_ref)s, %(event_id)s, %(trace_id)s, %(committed_at)s)
    ON CONFLICT ON CONSTRAINT results_tenant_request_key DO NOTHING
    RETURNING result_id
"""
_INSERT_OUTCOME = f"""
    INSERT INTO tool_outcomes (tenant, request_id, ordinal, tool, status, ref, summary)
    SELECT %(tenant)s, %(request_id)s, CAST(%(ordinal)s AS integer), %(tool)s, %(status)s, %(ref)s, %(summary)s
    {_GUARD}
"""
_INSERT_CONTENT = f"""
    INSERT INTO content_blobs (content_ref, tenant, user_id, request_id, from_address, to_address,
                               subject, body, attachments, from_owner)
    SELECT %(content_ref)s, %(tenant)s, %(user_id)s, %(request_id)s, %(from_address)s, %(to_address)s,
           %(subject)s, %(body)s, CAST(%(attachments)s AS jsonb), CAST(%(from_owner)s AS boolean)
    {_GUARD}
"""
_INSERT_OUTBOX = f"""
    INSERT INTO outbox (event_id, tenant, request_id, trace_id, span_id, payload)
    SELECT CAST(%(event_id)s AS uuid), %(tenant)s, %(request_id)s, %(trace_id)s, %(span_id)s, CAST(%(payload)s AS bytea)
    {_GUARD}
"""
_NOTIFY = f"SELECT pg_notify(%(channel)s, '') {_GUARD}"


def _request_rows(new: NewResult) -> dict[str, Any]:
    """The parameters of `add_new_request`'s statements, each carrying the guard's keys."""
    r, c, e = new.result, new.content, new.event
    guard = {"tenant": r.tenant, "result_id": r.result_id}
    return {
        "guard": guard,
        "result": result_row(new),
        "outcomes": [
            {**guard, "request_id": r.request_id, "ordinal": i, **outcome_row(o)}
            for i, o in enumerate(new.tool_outcomes)
        ],
        "content": {
            **guard,
            "content_ref": c.content_ref,
            "user_id": c.user,
            "request_id": c.request_id,
            "from_address": c.email.from_address,
            "to_address": c.email.to_address,
            "subject": c.email.subject,
            "body": c.email.body,
            "attachments": json.dumps([attachment_row(a) for a in c.attachments]),
            "from_owner": c.from_owner,
        },
        "outbox": {
            **guard,
            "event_id": e.event_id,
            "request_id": e.request_id,
            "trace_id": e.trace_id,
            "span_id": new.span_id,
            "payload": encode_event(e),
        },
    }
