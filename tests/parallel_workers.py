"""A pytest plugin: what lets `make test` run its suites on two pytest-xdist workers side by side.

Most of the suite's time is spent waiting — for services to report SERVING, for events to cross
the loop, for an outage to last its 30 s — with the two cores 60 % idle; two workers fill them.
Three things make that safe:

- **Ports.** Each worker hands out ports from its own slice of the range (`MEMLOOP_PORT_RANGE`),
  so two workers never name the same port for services they have not started yet.
- **Units of work.** A module runs whole on one worker (`--dist loadfile`): its fixtures start
  once and its tests keep their order. (`loadgroup` would also keep the e2e modules on the shared
  stack together, but pytest-xdist 3.8 cannot mark groups on pytest 9.2's node ids: every test
  became its own unit.) A worker that runs any of those modules starts that stack for itself.
- **Quiet tests.** A test marked `quiet` bounds wall-clock time, which a neighbour would
  distort; `make test` runs those afterwards, alone (`-m quiet`, no workers).
"""

from __future__ import annotations

import os

import pytest

from services.common.infra.processes import PORT_RANGE_ENV

_PORTS_FROM, _PORTS_TO = 10_000, 32_000  # below the kernel's usual ephemeral range (32768)


def worker_port_range(worker: str, count: int) -> str | None:
    """This xdist worker's slice of the ports ("gw1" of 2 → the upper half); None outside xdist."""
    if not worker.startswith("gw") or count < 2:
        return None
    width = (_PORTS_TO - _PORTS_FROM) // count
    low = _PORTS_FROM + int(worker[2:]) * width
    return f"{low}-{low + width}"


def pytest_configure(config: pytest.Config) -> None:
    # Read from the worker's own config, not PYTEST_XDIST_WORKER: a pytest a test starts inherits
    # that variable, and would take its parent worker's slice for workers of its own.
    given = getattr(config, "workerinput", None) or {}
    ports = worker_port_range(str(given.get("workerid", "")), int(given.get("workercount", 1)))
    if ports is not None and PORT_RANGE_ENV not in os.environ:
        os.environ[PORT_RANGE_ENV] = ports  # and so to every service this worker spawns
