"""The deletion workflow's reach into serving's other records (memory issue 6).

s0001 lets the app role delete a content blob but change nothing else it wrote. A request's text
also lives in its reply, its tool outcomes' summaries and the summaries its outbox payload carries
(a serialized LearningEvent), so forgetting a request blanks exactly those columns: the app role
gains UPDATE on them and on nothing else. Ids, routes, references and times stay, as the audit
and the outbox's publication evidence need them.

The deletion workflow names a request by its learning event (or its blob), so `results` gets an
index on each: one forgotten user may mean thousands of lookups.

Revision ID: s0002_forget_request_text
Revises: s0001_initial
"""

from __future__ import annotations

from alembic import context, op

revision = "s0002_forget_request_text"
down_revision = "s0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    app_role = str(context.config.attributes.get("app_role", "memloop_serving_app"))
    op.execute("CREATE INDEX results_by_event ON results (tenant, event_id)")
    op.execute("CREATE INDEX results_by_content ON results (tenant, content_ref)")
    op.execute(f"GRANT UPDATE (reply) ON results TO {app_role}")
    op.execute(f"GRANT UPDATE (summary) ON tool_outcomes TO {app_role}")
    op.execute(f"GRANT UPDATE (payload) ON outbox TO {app_role}")


def downgrade() -> None:
    app_role = str(context.config.attributes.get("app_role", "memloop_serving_app"))
    op.execute(f"REVOKE UPDATE (reply) ON results FROM {app_role}")
    op.execute(f"REVOKE UPDATE (summary) ON tool_outcomes FROM {app_role}")
    op.execute(f"REVOKE UPDATE (payload) ON outbox FROM {app_role}")
    op.execute("DROP INDEX results_by_content")
    op.execute("DROP INDEX results_by_event")
