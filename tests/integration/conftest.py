"""Fixtures shared by the integration modules (the session's servers are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import SpawnService, TestInfra
from tests.integration.test_memory_support import MemoryCluster


@pytest.fixture
def cluster(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryCluster:
    """Memory replicas on a database and a stream prefix of this test's own."""
    return MemoryCluster(
        spawn, database_url=new_database("memory"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
