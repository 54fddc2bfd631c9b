"""The backfill's preview (`validate_only`, AIP-163), memory as a real process on real PostgreSQL:
the preview answers exactly what the apply then does, and writes nothing, not even an audit row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import SpawnService, TestInfra, random_ref
from tests.integration.procedures_support import SUPERSEDED, Procedures, audit_trail, legacy_request
from tests.integration.test_memory_support import MemoryCluster, MemoryNode

pytestmark = pytest.mark.integration


@pytest.fixture
def node(
    infra: TestInfra, new_database: Callable[[str], str], nats_prefix: str, spawn: SpawnService, tmp_path: Path
) -> MemoryNode:
    cluster = MemoryCluster(
        spawn, database_url=new_database("memory"), nats_url=infra.nats_url, prefix=nats_prefix, root=tmp_path
    )
    return cluster.start("memory-procedures-preview")


def test_a_preview_answers_what_the_apply_does_and_writes_nothing(node: MemoryNode) -> None:
    # Given: a tenant with no procedures and the pilot's legacy block
    tenant = random_ref("t")
    admin = Procedures(node, tenant, "admin", subject="root")
    preview_request = legacy_request(tenant)
    preview_request.validate_only = True
    # When: the admin previews
    preview = admin.BackfillLearnedProcedures(preview_request)
    # Then: it reports five inserts and two active rules, and the store and the audit are untouched
    assert (preview.inserted, preview.already_present, list(preview.refused)) == (5, 0, [])
    assert len(preview.active) == 2
    assert admin.listed() == [] and admin.listed(SUPERSEDED) == []
    assert audit_trail(node, tenant) == []
    # When: the admin applies
    applied = admin.BackfillLearnedProcedures(legacy_request(tenant))
    # Then: the apply did what the preview said, and a later preview says nothing is left to do
    assert (applied.inserted, applied.already_present) == (preview.inserted, preview.already_present)
    assert sorted(p.procedure_id for p in applied.active) == sorted(p.procedure_id for p in preview.active)
    again = admin.BackfillLearnedProcedures(preview_request)
    assert (again.inserted, again.already_present) == (0, 5)
    assert len(audit_trail(node, tenant)) == 5
