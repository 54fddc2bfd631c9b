"""Property-based fuzzing of every RPC of every service, against the stack running as processes.

Enumerated from the descriptors. For each example (a random request and a random credential):
no INTERNAL or UNKNOWN, no hang (DEADLINE_EXCEEDED), no RESOURCE_EXHAUSTED from an oversized
error echo, no process death; a missing, garbage, expired or foreign-signed token never succeeds;
a token of another tenant never succeeds for this one; and a rejected call writes nothing (the row
count of every table of both databases is unchanged). A second property sends a valid request's
bytes mangled (cut, a byte changed, bytes inserted, bad UTF-8): never INTERNAL, which is what
gRPC's Python server answers when the request does not parse, unless the edge refuses it first.
`make test` runs a few examples per RPC; `make fuzz` runs ≥300 per RPC (MEMLOOP_FUZZ_EXAMPLES) and prints the table.
"""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.gen.memloop.v1 import (
    consolidation_service_pb2,
    learned_procedure_service_pb2,
    memory_service_pb2,
    policy_service_pb2,
    serving_service_pb2,
)
from tests.fuzz.harness import (
    FORBIDDEN,
    FOREIGN,
    TALLY,
    TENANT,
    TOKEN_KINDS,
    UNAUTHENTICATED_KINDS,
    Fuzzed,
    examples_per_rpc,
    tenant_field,
)
from tests.fuzz.strategies import KnownIds, mangled, requests

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]

MODULES = (
    serving_service_pb2,
    policy_service_pb2,
    memory_service_pb2,
    learned_procedure_service_pb2,
    consolidation_service_pb2,
)
METHODS = [
    (f"/{service.full_name}/{method.name}", method)
    for module in MODULES
    for service in module.DESCRIPTOR.services_by_name.values()
    for method in service.methods
]


def _tenant_of(request: Any, path: str) -> str:
    value: Any = request
    for part in path.split("."):
        value = getattr(value, part)
    return str(value)


def _name(full: str) -> str:
    return full.rsplit("/", 1)[-1]


EVERY_RPC = pytest.mark.parametrize(("full", "method"), METHODS, ids=[_name(full) for full, _ in METHODS])


def _per_rpc_settings() -> settings:
    """The profile's examples per RPC, no deadline (the stack is slow when loaded), nothing cached."""
    return settings(
        max_examples=examples_per_rpc(),
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        database=None,
    )


@EVERY_RPC
def test_every_rpc_holds_its_properties_under_random_and_hostile_input(
    fuzzed: Fuzzed, known: KnownIds, full: str, method: Any
) -> None:
    response_class, path, rpc = message_factory.GetMessageClass(method.output_type), tenant_field(full), _name(full)

    @_per_rpc_settings()
    @given(request=requests(method, known, path, TENANT), token_kind=st.sampled_from(TOKEN_KINDS))
    def check(request: Any, token_kind: str) -> None:
        # Given the stack's rows before the call
        before = fuzzed.row_counts()
        # When the RPC is called with this request and credential
        started = time.monotonic()
        code = fuzzed.call(full, request, response_class, token_kind)
        TALLY.add(rpc, code, time.monotonic() - started)
        # Then: never a bug, a hang or a masked code, and every process is still alive
        assert code not in FORBIDDEN, f"{rpc} answered {code.name} ({token_kind}): {str(request)[:500]!r}"
        assert fuzzed.dead_processes() == [], f"{rpc} killed {fuzzed.dead_processes()}"
        # Nothing succeeds without a valid token, nothing crosses tenants
        if token_kind in UNAUTHENTICATED_KINDS:
            assert code == grpc.StatusCode.UNAUTHENTICATED, (rpc, token_kind, code)
        if token_kind == "foreign" and _tenant_of(request, path) != FOREIGN:
            assert code != grpc.StatusCode.OK, f"{rpc}: a {FOREIGN} token acted for {_tenant_of(request, path)!r}"
        # A rejected call writes nothing (re-checked once background work settles, with the same call)
        if code != grpc.StatusCode.OK and fuzzed.row_counts() != before:
            settled = fuzzed.settled_row_counts()
            again = fuzzed.call(full, request, response_class, token_kind)
            assert again == code or again != grpc.StatusCode.OK
            assert fuzzed.row_counts() == settled, f"{rpc} wrote rows although it answered {code.name}"

    check()


@EVERY_RPC
def test_every_rpc_refuses_mangled_bytes_without_a_bug_or_a_write(
    fuzzed: Fuzzed, known: KnownIds, full: str, method: Any
) -> None:
    response_class, path, rpc = message_factory.GetMessageClass(method.output_type), tenant_field(full), _name(full)

    @_per_rpc_settings()
    @given(raw=mangled(requests(method, known, path, TENANT)))
    def check(raw: Any) -> None:
        # Given the stack's rows before the call
        before = fuzzed.row_counts()
        # When the RPC is sent a valid request's bytes, mangled, with a valid token
        started = time.monotonic()
        code = fuzzed.call(full, raw, response_class, "valid")
        TALLY.add(f"{rpc} (bytes)", code, time.monotonic() - started)
        # Then never INTERNAL (gRPC's answer to a deserializer that raises), a hang or a dead process
        assert code not in FORBIDDEN, f"{rpc} answered {code.name} to bytes {raw.data[:200]!r}"
        assert fuzzed.dead_processes() == [], f"{rpc} killed {fuzzed.dead_processes()}"
        # and a refused call writes nothing
        if code != grpc.StatusCode.OK and fuzzed.row_counts() != before:
            settled = fuzzed.settled_row_counts()
            fuzzed.call(full, raw, response_class, "valid")
            assert fuzzed.row_counts() == settled, f"{rpc} wrote rows although it answered {code.name}"

    check()
