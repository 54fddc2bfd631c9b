"""The stack under fuzzing: processes, tokens, row counts, liveness, and the per-RPC tally.

Used by tests/fuzz/test_rpc_fuzz.py (and `make fuzz`); holds no tests.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
import psycopg

from services.cli.stack import Stack
from services.common import access
from services.common.auth import issue_token
from services.common.auth_keys import SigningKey

ALL_ROLES = ("reader", "writer", "reviewer", "admin", "service")
TENANT, FOREIGN = "acme", "globex"
TOKEN_KINDS = ("valid", "valid", "valid", "valid", "foreign", "missing", "garbage", "expired", "wrong_secret")
UNAUTHENTICATED_KINDS = frozenset({"missing", "garbage", "expired", "wrong_secret"})
CALL_TIMEOUT = 20.0
#: Answers that must never come back: a bug (INTERNAL, UNKNOWN), a hang (DEADLINE_EXCEEDED), or a
#: real code masked by an oversized error echo (RESOURCE_EXHAUSTED).
FORBIDDEN = frozenset(
    {
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


def examples_per_rpc() -> int:
    """The profile: a few per RPC inside `make test`, MEMLOOP_FUZZ_EXAMPLES (≥300 in `make fuzz`)."""
    return int(os.environ.get("MEMLOOP_FUZZ_EXAMPLES", "6"))


@dataclass
class Tally:
    """What each RPC answered, for the printed table."""

    codes: dict[str, Counter[str]] = field(default_factory=dict)
    slowest: dict[str, float] = field(default_factory=dict)

    def add(self, rpc: str, code: grpc.StatusCode, seconds: float) -> None:
        self.codes.setdefault(rpc, Counter())[code.name] += 1
        self.slowest[rpc] = max(self.slowest.get(rpc, 0.0), seconds)

    def table(self) -> str:
        columns = ["OK", "INVALID_ARGUMENT", "PERMISSION_DENIED", "UNAUTHENTICATED", "NOT_FOUND", "other"]
        lines = [
            "| RPC | calls | " + " | ".join(columns) + " | INTERNAL/UNKNOWN | hang | slowest s |",
            "|---|---:|" + "---:|" * len(columns) + "---:|---:|---:|",
        ]
        totals: Counter[str] = Counter()
        for rpc in sorted(self.codes):
            counts = self.codes[rpc]
            known = sum(counts[c] for c in columns[:-1])
            bad = counts["INTERNAL"] + counts["UNKNOWN"]
            other = sum(counts.values()) - known - bad - counts["DEADLINE_EXCEEDED"]
            row = [counts[c] for c in columns[:-1]] + [other]
            totals.update(counts)
            lines.append(
                f"| {rpc} | {sum(counts.values())} | "
                + " | ".join(str(v) for v in row)
                + f" | {bad} | {counts['DEADLINE_EXCEEDED']} | {self.slowest[rpc]:.2f} |"
            )
        bad_total, hangs = totals["INTERNAL"] + totals["UNKNOWN"], totals["DEADLINE_EXCEEDED"]
        other_total = sum(totals.values()) - sum(totals[c] for c in columns[:-1]) - bad_total - hangs
        lines.append(
            f"| **all {len(self.codes)} RPCs** | {sum(totals.values())} | "
            + " | ".join(str(totals[c]) for c in columns[:-1])
            + f" | {other_total} | {bad_total} | {hangs} | {max(self.slowest.values(), default=0):.2f} |"
        )
        return "\n".join(lines)


TALLY = Tally()


class Fuzzed:
    """A running stack plus what the properties need to observe it."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self._channels: dict[str, grpc.Channel] = {}
        self._counters = [RowCounter(stack.serving_db_url), RowCounter(stack.memory_db_url)]
        issuer = stack.issuer
        assert issuer is not None, "the stack's token issuer key exists once it has started"
        self.tokens: dict[str, str | None] = {
            "valid": issue_token(issuer, subject="fuzz", tenant=TENANT, roles=ALL_ROLES),
            "foreign": issue_token(issuer, subject="fuzz-foreign", tenant=FOREIGN, roles=ALL_ROLES),
            "missing": None,
            "garbage": "not-a-jwt.garbage.token",
            "expired": issue_token(issuer, subject="fuzz", tenant=TENANT, roles=ALL_ROLES, ttl_seconds=-60),
            "wrong_secret": issue_token(SigningKey.generate(), subject="fuzz", tenant=TENANT, roles=ALL_ROLES),
        }

    def target_of(self, full_method: str) -> str:
        service = full_method.split("/")[1].rsplit(".", 1)[-1]
        owner = {"ServingService": "serving", "PolicyService": "policy"}.get(service, "memory")
        return self.stack.services[owner].target

    def call(self, full_method: str, request: Any, response_class: Any, token_kind: str) -> grpc.StatusCode:
        target = self.target_of(full_method)
        channel = self._channels.get(target)
        if channel is None:
            channel = self._channels[target] = grpc.insecure_channel(target)
        stub = channel.unary_unary(
            full_method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_class.FromString,
        )
        token = self.tokens[token_kind]
        metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        try:
            stub(request, metadata=metadata, timeout=CALL_TIMEOUT)
        except grpc.RpcError as error:
            return error.code()
        return grpc.StatusCode.OK

    def row_counts(self) -> tuple[int, ...]:
        return tuple(n for counter in self._counters for n in counter.counts())

    def settled_row_counts(self, timeout: float = 15.0) -> tuple[int, ...]:
        """Row counts once background work (relay, worker, deletion steps) has stopped changing them."""
        deadline = time.monotonic() + timeout
        last = self.row_counts()
        while time.monotonic() < deadline:
            time.sleep(0.3)
            now = self.row_counts()
            if now == last:
                return now
            last = now
        return last

    def dead_processes(self) -> list[str]:
        return [name for name, handle in self.stack.services.items() if not handle.process.is_running]

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        for counter in self._counters:
            counter.close()


class RowCounter:
    """Counts every row of every table of one database, as its owner (RLS does not hide rows)."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1), autocommit=True)
        tables = [
            r[0]
            for r in self._conn.execute(
                "SELECT quote_ident(table_name) FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'alembic_version'"
                " ORDER BY table_name"
            ).fetchall()
        ]
        self._sql = "SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in tables)

    def counts(self) -> tuple[int, ...]:
        row = self._conn.execute(self._sql).fetchone()
        return tuple(int(v) for v in (row or ()))

    def close(self) -> None:
        self._conn.close()


def tenant_field(full_method: str) -> str:
    rule = access.rule_for(full_method)
    assert rule is not None, full_method
    return rule.tenant_field
