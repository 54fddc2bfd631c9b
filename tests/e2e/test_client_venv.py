"""memloop-client installed into a fresh venv without the services package drives the whole stack
(record, context, forget, deletion, reviews) as processes; and the README's example runs.

The venv gets `pip install clients/python` from the package index pip is configured with, so the
test also proves the client's declared dependencies are enough.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.stack import Stack
from services.common.context_version import CONTEXT_VERSION_KEY
from services.common.gen.memloop.v1 import memory_service_pb2 as pb
from services.common.gen.memloop.v1 import serving_service_pb2 as spb
from tests.e2e.support import Clients, fresh_tenant

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[2]


def _clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH and no venv of ours: what the fresh interpreter sees is only what it installed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The python of a new venv with `pip install clients/python` and nothing else of ours."""
    root = tmp_path_factory.mktemp("client-venv")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, cwd=root, env=_clean_env())
    python = root / "venv" / "bin" / "python"
    source = root / "memloop-client"  # a copy: pip's in-tree build must not write into the clone
    shutil.copytree(ROOT / "clients" / "python", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(source)],
        cwd=root,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    yield python


def _settings(stack: Stack, tenant: str, token_file: Path) -> dict[str, str]:
    token_file.write_text(stack.token(tenant, roles=("reader", "writer")))
    return {
        "MEMLOOP_SERVING_TARGET": stack.services["serving"].target,
        "MEMLOOP_MEMORY_TARGET": stack.services["memory"].target,
        "MEMLOOP_TENANT": tenant,
        "MEMLOOP_TOKEN_FILE": str(token_file),
    }


def test_the_client_alone_records_reads_context_and_forgets(stack: Stack, client_python: Path, tmp_path: Path) -> None:
    # Given a fresh venv where only memloop-client is installed
    probe = subprocess.run(
        [str(client_python), "-c", "import services"], cwd=tmp_path, env=_clean_env(), capture_output=True
    )
    assert probe.returncode != 0, "the fresh venv must not see the services package"
    tenant = fresh_tenant()
    # When a script drives the stack through the client alone
    script = tmp_path / "client_drive.py"
    script.write_text((ROOT / "tests" / "e2e" / "client_drive.py").read_text())
    run = subprocess.run(
        [str(client_python), str(script)],
        cwd=tmp_path,
        env=_clean_env(**_settings(stack, tenant, tmp_path / "token")),
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    # Then bad input came back as InvalidArgument naming the field
    assert (report["invalid_field"], report["invalid_reason"]) == ("thread", "INVALID_ARGUMENT")
    # Then the recorded mail was learned, and the context showed it with its provenance
    memory = report["memory"]
    assert memory["type"] == "preference" and "10:00" in memory["text"] and memory["state"] == "active"
    assert memory["source_event_ids"] == [report["event_id"]] and memory["policy_version"]
    assert memory["trace_id"] and 0 < memory["confidence"] <= 1 and not report["replayed"]
    assert memory["memory_id"] in report["async_memory_ids"]
    # Then forgetting made it unretrievable at once, and the deletion completed everywhere
    assert report["forgotten"] == 1 and memory["memory_id"] not in report["after_forget"]
    assert report["deletion"]["complete"] and set(report["deletion"]["steps"].values()) == {"done"}
    # Then serving's learning event carries the context version the agent passed back
    clients = Clients(stack, tenant)
    try:
        outbox = clients.serving.GetOutboxEvent(
            spb.GetOutboxEventRequest(tenant=tenant, request_id=report["request_id"]), timeout=10
        )
        assert outbox.event.procedure_versions[CONTEXT_VERSION_KEY] == report["context_version"]
        forgotten = clients.memory.GetMemory(pb.GetMemoryRequest(tenant=tenant, memory_id=memory["memory_id"]))
        assert forgotten.memory.state == pb.MEMORY_STATE_DELETED
    finally:
        clients.close()


def test_the_agent_loop_example_learns_between_its_turns(stack: Stack, client_python: Path, tmp_path: Path) -> None:
    # Given the example, run by the client-only venv against the stack
    tenant = fresh_tenant()
    env = _settings(stack, tenant, tmp_path / "token")
    env["MEMLOOP_TOKEN"] = (tmp_path / "token").read_text()
    # When it runs its two turns
    run = subprocess.run(
        [str(client_python), str(ROOT / "examples" / "agent_loop.py")],
        cwd=tmp_path,
        env=_clean_env(**env),
        capture_output=True,
        text=True,
        timeout=200,
    )
    # Then the second turn shows the preference learned from the first
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("turn 1: saw 0 memories") and "replayed=False" in lines[0]
    assert any(line.startswith("turn 2: learned preference") and "10:00" in line for line in lines[1:])
