"""The whole stack as separate processes, on the session's PostgreSQL and NATS (embedded or the
machine's), with names unique to this run so it never meets another run's data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from tests.helpers import TestInfra, random_ref


def make_stack(infra: TestInfra, data_dir: Path, **overrides: object) -> Stack:
    run = random_ref("e2e").replace("-", "_")
    spec = StackSpec(
        data_dir=data_dir,
        database_admin_url=infra.admin_db_url,
        nats_url=infra.nats_url,
        database_prefix=run,
        subject_prefix=run,
        learning_stream=f"{run.upper()}_LEARNING",
        **{"embedder": "hashing", **overrides},  # type: ignore[arg-type]
    )
    return Stack(spec)


@pytest.fixture(scope="module")
def stack(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One running stack per test module; tests use unique request ids so they never collide."""
    running = make_stack(infra, tmp_path_factory.mktemp("stack")).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright; imported here lazily so other modules skip its cost."""
    from tests.e2e.console_support import launch_browser

    yield from launch_browser()
