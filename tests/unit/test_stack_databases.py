"""Where the stack puts its two databases: beside each other by default, memory's on a server of
its own when the spec names one (its own WAL: the bench's what-if, or an operator's placement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli import stack as stack_module
from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec

SERVING_SERVER = "postgresql+psycopg://postgres@127.0.0.1:1/postgres"
MEMORY_SERVER = "postgresql+psycopg://postgres@127.0.0.1:2/postgres"


def _databases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_server: str = "") -> tuple[str, str]:
    created: list[tuple[str, str]] = []

    def create_database(admin_url: str, name: str) -> str:
        created.append((admin_url, name))
        return admin_url.rsplit("/", 1)[0] + "/" + name

    monkeypatch.setattr(stack_module, "create_database", create_database)
    stack = Stack(
        StackSpec(
            data_dir=tmp_path,
            database_admin_url=SERVING_SERVER,
            nats_url="nats://127.0.0.1:1",
            memory_database_admin_url=memory_server,
        )
    )
    stack._start_infra()
    assert sorted(name for _, name in created) == ["memloop_memory", "memloop_serving"]
    return stack.serving_db_url, stack.memory_db_url


def test_both_databases_share_the_server_unless_memory_is_given_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serving, memory = _databases(tmp_path, monkeypatch)
    assert serving.startswith("postgresql+psycopg://postgres@127.0.0.1:1/") and memory.startswith(
        "postgresql+psycopg://postgres@127.0.0.1:1/"
    )
    serving, memory = _databases(tmp_path, monkeypatch, MEMORY_SERVER)
    assert serving == "postgresql+psycopg://postgres@127.0.0.1:1/memloop_serving"
    assert memory == "postgresql+psycopg://postgres@127.0.0.1:2/memloop_memory"
