"""The whole stack as separate processes, on the session's PostgreSQL and NATS (embedded or the
machine's), with names unique to this run so it never meets another run's data.

Modules that only need the default topology share one stack (`stack`, started once for the e2e
package): a stack is about nine processes, and starting one per module was the largest part of
`make test`'s e2e time. Those tests stay independent the way they always were: each uses its own
tenant (or unique request ids) and reads only its own rows, subjects and traces. Modules that check
a topology or search whole databases and logs (deletion, memory split, cluster, TLS, at rest,
failure tuning, the minilm embedder) keep a stack of their own through `make_stack`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.cli.stack import Stack
from services.cli.stack_spec import StackSpec
from tests.helpers import TestInfra, random_ref

SHARED = "stack"


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


@pytest.fixture(scope="package")
def _shared_stack(infra: TestInfra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = make_stack(infra, tmp_path_factory.mktemp("stack")).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def stack(_shared_stack: Stack) -> Stack:
    """The default stack, shared by every module that asks for it; tests use their own tenants or
    unique request ids so they never collide.

    Tests that kill or stop a process restart it before they end; one left down would make every
    later test fail for the wrong reason, so it is named here instead.
    """
    down = [name for name, handle in _shared_stack.services.items() if not handle.process.is_running]
    if down:
        pytest.fail(f"the shared stack's {', '.join(down)} is not running (left down by an earlier test)")
    return _shared_stack


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the e2e tests on the shared stack last among the e2e tests, together: the stack then
    starts once, never idles beside another module's stack (cluster and memory-split tests measure
    under load), and stops when the e2e package ends. Other items keep their places and order."""
    here = Path(__file__).parent
    slots = [i for i, item in enumerate(items) if here in item.path.parents]
    e2e = [items[i] for i in slots]
    ordered = sorted(e2e, key=lambda item: SHARED in getattr(item, "fixturenames", ()))  # stable
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright; imported here lazily so other modules skip its cost."""
    from tests.e2e.console_support import launch_browser

    yield from launch_browser()
