"""Small helpers shared by every test suite; importable (`from tests.helpers import ...`), unlike conftest."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from services.common.infra.nats import EmbeddedNats
from services.common.infra.processes import ServiceProcess


def random_ref(prefix: str) -> str:
    """A fresh id such as `evt-1f3a9c0d2b4e`, so tests never collide and never need cleanup."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class TestInfra:
    """The servers a test session runs against (the `infra` fixture).

    `external` is True when the environment named the servers (CI's second pass against the
    machine's PostgreSQL and NATS); then `embedded_nats` is None and NATS cannot be stopped by a
    test, so outage tests start their own `EmbeddedNats`. `nats_monitor_url` is the HTTP monitoring
    endpoint when known (always for the embedded server).
    """

    __test__: ClassVar[bool] = False  # a dataclass named Test*: not a test class for pytest

    admin_db_url: str
    nats_url: str
    nats_monitor_url: str | None
    embedded_nats: EmbeddedNats | None
    external: bool


SpawnService = Callable[[str, dict[str, str], int, str], ServiceProcess]
"""The `spawn` fixture: `(module, env, port, name) -> ServiceProcess`, already SERVING."""
