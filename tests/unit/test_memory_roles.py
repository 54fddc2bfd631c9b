"""A memory replica's two processes (issue 15): what MEMLOOP_MEMORY_ROLE accepts, what the
ingestion process serves, and where the stack points the worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from services.cli.stack import Stack
from services.cli.stack_spec import ServiceHandle, StackSpec
from services.common.auth_keys import SigningKey
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.memory.entrypoints.grpc_server import INGESTION_RPCS, IngestionServicer
from services.memory.settings import MemorySettings

_ENV = {
    "MEMLOOP_POLICY_VERIFY_KEY": "key.pem",
    "MEMLOOP_MEMORY_DATABASE_URL": "postgresql://u@h/d",
    "MEMLOOP_AUTH_PUBLIC_KEYS": SigningKey.generate().public_pem(),
}


def test_the_role_defaults_to_one_process_and_refuses_an_unknown_one() -> None:
    assert MemorySettings.from_env(_ENV).role == "all"
    assert MemorySettings.from_env({**_ENV, "MEMLOOP_MEMORY_ROLE": "Ingest"}).role == "ingest"
    assert not MemorySettings.from_env({**_ENV, "MEMLOOP_MEMORY_ROLE": "ingest"}).serves_retrieval
    with pytest.raises(SystemExit, match="MEMLOOP_MEMORY_ROLE"):
        MemorySettings.from_env({**_ENV, "MEMLOOP_MEMORY_ROLE": "reader"})


class _Aborted(Exception):
    pass


class _Context:
    def __init__(self) -> None:
        self.code: grpc.StatusCode | None = None

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        raise _Aborted(details)


def test_the_ingestion_process_serves_the_workers_calls_and_refuses_the_rest() -> None:
    methods = set(pb.DESCRIPTOR.services_by_name["MemoryService"].methods_by_name)
    assert INGESTION_RPCS.issubset(methods) and methods - INGESTION_RPCS
    servicer = IngestionServicer.__new__(IngestionServicer)  # no ports: the refusals touch none
    for name in sorted(methods - INGESTION_RPCS):
        context = _Context()
        with pytest.raises(_Aborted, match="retrieval process"):
            getattr(servicer, name)(object(), context)
        assert context.code == grpc.StatusCode.UNIMPLEMENTED, name
    for name in INGESTION_RPCS:  # the core's own implementations, not the refusal
        assert getattr(IngestionServicer, name).__qualname__.startswith("CoreMemoryRpcs."), name


def test_the_stack_points_the_worker_at_the_ingestion_processes_and_everyone_else_at_retrieval(
    tmp_path: Path,
) -> None:
    stack: Any = Stack(StackSpec(data_dir=tmp_path, memory_replicas=2))
    stack.issuer = None
    assert stack.memory_names() == ["memory", "memory-1"]
    assert [stack.ingest_name(n) for n in stack.memory_names()] == ["memory-ingest", "memory-1-ingest"]
    worker = stack._kind_env("worker")["MEMLOOP_MEMORY_TARGET"]
    ingest_ports = [stack._grpc_port(n) for n in ("memory-ingest", "memory-1-ingest")]
    assert worker == "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ingest_ports)
    assert "MEMLOOP_MEMORY_TARGET" not in stack._kind_env("serving")
    unsplit = Stack(StackSpec(data_dir=tmp_path, memory_split=False))
    assert unsplit.ingest_name("memory") == "memory"
    assert unsplit._kind_env("worker")["MEMLOOP_MEMORY_TARGET"] == f"127.0.0.1:{unsplit._grpc_port('memory')}"


def test_every_memory_rpc_the_worker_calls_is_served_by_the_ingestion_process() -> None:
    """The worker's memory peer is the ingestion process: an RPC it calls there and the process
    refuses (UNIMPLEMENTED) would stall learning, retried forever. Read from the worker's adapter
    itself, so a new call cannot be added without the ingestion process serving it."""
    import re
    from pathlib import Path

    import services.worker.adapters.grpc_peers as peers
    from services.common.gen.memloop.v1 import memory_service_pb2

    memory_methods = set(memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].methods_by_name)
    source = Path(peers.__file__).read_text()
    called = set(re.findall(r"[sS]tub\(ch\)\.(\w+)\(", source)) & memory_methods
    assert {"FindConflicts", "BatchFindConflicts", "ApplyLearning"} <= called  # the pattern still finds them
    assert called <= INGESTION_RPCS, called - INGESTION_RPCS


def test_the_stack_gives_the_worker_servings_and_the_relays_metrics_as_its_back_pressure_signal(
    tmp_path: Path,
) -> None:
    stack: Any = Stack(StackSpec(data_dir=tmp_path))
    for port, name in enumerate(("serving", "serving-loop", "relay", "relay-1", "memory", "policy"), start=9000):
        stack.services[name] = ServiceHandle(name, None, port + 100, port)  # type: ignore[arg-type]
    urls = stack._kind_env("worker")["MEMLOOP_WORKER_PRESSURE_URLS"].split(",")
    assert urls == [f"http://127.0.0.1:{p}/metrics" for p in (9000, 9002, 9003)]
    assert "MEMLOOP_WORKER_PRESSURE_URLS" not in stack._kind_env("serving")
    # an explicit setting (empty: back-pressure off) is the caller's to keep
    own: Any = Stack(StackSpec(data_dir=tmp_path, extra_env={"MEMLOOP_WORKER_PRESSURE_URLS": ""}))
    assert "MEMLOOP_WORKER_PRESSURE_URLS" not in own._kind_env("worker")


def test_sleep_time_consolidation_runs_in_the_ingestion_process_never_beside_retrieval() -> None:
    """A job is seconds to minutes of Python and SQL: in the retrieval process it held the GIL and
    a core while searches waited (bench_context: SearchMemories p50 44 ms during a job, 4.2 without)."""
    from services.memory.bootstrap import schedules_consolidation

    assert [role for role in ("all", "retrieval", "ingest") if schedules_consolidation(role)] == ["all", "ingest"]
