"""SQLAlchemy Core descriptions of the memory tables, for the repositories' queries.

The migrations own the DDL (indexes, row-level security, grants, triggers); these objects only
name columns, so they never create anything.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData()

memories = Table(
    "memories",
    metadata,
    Column("memory_id", Text, primary_key=True),
    Column("row_id", BigInteger),
    Column("tenant", Text),
    Column("user_id", Text),
    Column("type", Text),
    Column("text", Text),
    Column("intent_key", Text),
    Column("status", Text),
    Column("supersedes", Text),
    Column("superseded_by", Text),
    Column("confidence", Float),
    Column("origin", Text),
    Column("sensitivity", Text),
    Column("candidate_key", Text),
    Column("event_id", Text),
    Column("trace_id", Text),
    Column("policy_version", Text),
    Column("status_event_id", Text),
    Column("status_trace_id", Text),
    Column("observed_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True)),
    Column("updated_at", DateTime(timezone=True)),
    Column("change_seq", BigInteger),
)

memory_sources = Table(
    "memory_sources",
    metadata,
    Column("memory_id", Text, primary_key=True),
    Column("event_id", Text, primary_key=True),
    Column("tenant", Text),
    Column("trace_id", Text),
    Column("added_at", DateTime(timezone=True)),
)

memory_vectors = Table(
    "memory_vectors",
    metadata,
    Column("memory_id", Text, primary_key=True),
    Column("embedder", Text, primary_key=True),
    Column("tenant", Text),
    Column("dim", Integer),
    Column("vector", LargeBinary),
)

candidates = Table(
    "candidates",
    metadata,
    Column("candidate_id", Text, primary_key=True),
    Column("tenant", Text),
    Column("user_id", Text),
    Column("event_id", Text),
    Column("ordinal", Integer),
    Column("candidate_key", Text),
    Column("type", Text),
    Column("origin", Text),
    Column("sensitivity", Text),
    Column("confidence", Float),
    Column("intent_key", Text),
    Column("version", Integer),
    Column("text", Text),
    Column("outcome", Text),
    Column("reason_codes", JSONB),
    Column("reason_messages", JSONB),
    Column("policy_version", Text),
    Column("trace_id", Text),
    Column("memory_id", Text),
)

review_items = Table(
    "review_items",
    metadata,
    Column("review_item_id", Text, primary_key=True),
    Column("row_id", BigInteger),
    Column("tenant", Text),
    Column("user_id", Text),
    Column("candidate_id", Text),
    Column("event_id", Text),
    Column("trace_id", Text),
    Column("state", Text),
    Column("reviewer", Text),
    Column("resolution_reason", Text),
    Column("resolve_trace_id", Text),
    Column("memory_id", Text),
    Column("created_at", DateTime(timezone=True)),
    Column("resolved_at", DateTime(timezone=True)),
)

processed_events = Table(
    "processed_events",
    metadata,
    Column("tenant", Text, primary_key=True),
    Column("event_id", Text, primary_key=True),
    Column("user_id", Text),
    Column("trace_id", Text),
    Column("outcome", JSONB),
    Column("processed_at", DateTime(timezone=True)),
)

audit_events = Table(
    "audit_events",
    metadata,
    Column("audit_id", Text, primary_key=True),
    Column("seq", BigInteger),
    Column("tenant", Text),
    Column("action", Text),
    Column("event_id", Text),
    Column("trace_id", Text),
    Column("memory_id", Text),
    Column("actor", Text),
    Column("detail", JSONB),
    Column("created_at", DateTime(timezone=True)),
)

command_requests = Table(
    "command_requests",
    metadata,
    Column("tenant", Text, primary_key=True),
    Column("request_id", Text, primary_key=True),
    Column("operation", Text),
    Column("result", JSONB),
)

memory_store_identity = Table(
    "memory_store_identity",
    metadata,
    Column("singleton", Boolean, primary_key=True),
    Column("database_id", Text),
)

operator_notes = Table(
    "operator_notes",
    metadata,
    Column("note_id", Text, primary_key=True),
    Column("tenant", Text),
    Column("memory_id", Text),
    Column("review_item_id", Text),
    Column("procedure_id", Text),
    Column("text", Text),
    Column("created_at", DateTime(timezone=True)),
)
