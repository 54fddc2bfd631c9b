"""Side by side, test workers never hand out the same port (tests/parallel_workers.py and
`processes.free_port`'s MEMLOOP_PORT_RANGE)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.common.infra import InfraError
from services.common.infra.processes import PORT_RANGE_ENV, free_port
from tests.parallel_workers import worker_port_range

REPO = Path(__file__).resolve().parents[2]


def _bounds(spec: str) -> range:
    low, high = (int(part) for part in spec.split("-"))
    return range(low, high)


@pytest.mark.parametrize("count", [2, 3, 4])
def test_each_worker_gets_its_own_slice_below_the_ephemeral_ports(count: int) -> None:
    slices = [_bounds(worker_port_range(f"gw{index}", count) or "") for index in range(count)]
    ports = [port for one in slices for port in one]
    assert len(ports) == len(set(ports)), "two workers share a port"
    assert min(ports) >= 10_000 and max(ports) < 32_768
    assert all(len(one) >= 5_000 for one in slices)


@pytest.mark.parametrize(("worker", "count"), [("", 1), ("", 2), ("gw0", 1), ("master", 2)])
def test_outside_a_multi_worker_run_the_range_is_left_alone(worker: str, count: int) -> None:
    assert worker_port_range(worker, count) is None


def test_free_port_hands_out_ports_from_the_named_range_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PORT_RANGE_ENV, "23100-23140")
    ports = {free_port() for _ in range(20)}
    assert len(ports) == 20
    assert all(23_100 <= port < 23_140 for port in ports)


@pytest.mark.parametrize("spec", ["23100", "23100-", "a-b", "23140-23100", "80-2000", "60000-70000"])
def test_a_malformed_range_is_refused_by_its_name(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    monkeypatch.setenv(PORT_RANGE_ENV, spec)
    with pytest.raises(InfraError, match=PORT_RANGE_ENV):
        free_port()


_MODULE = """
import os
from pathlib import Path

def _record(name):
    with (Path(os.environ["OUT"]) / "ran.txt").open("a") as out:
        out.write(f"{os.environ['PYTEST_XDIST_WORKER']} {__name__} {name} {os.environ['MEMLOOP_PORT_RANGE']}\\n")

"""


def test_a_module_runs_whole_on_one_worker_and_each_worker_has_its_own_ports(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "pytest.ini").write_text("[pytest]\n")
    for module in ("test_a", "test_b", "test_c", "test_d"):
        tests = "".join(f"def test_{i}():\n    _record('{i}')\n\n" for i in range(6))
        (run_dir / f"{module}.py").write_text(_MODULE + tests)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "OUT": str(out), "PYTHONPATH": str(REPO)}
    env.pop(PORT_RANGE_ENV, None)
    plugins = ["-p", "no:cacheprovider", "-p", "tests.parallel_workers"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, "-n", "2", "--dist", "loadfile", str(run_dir)],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in (out / "ran.txt").read_text().splitlines()]
    assert len(rows) == 24
    workers_of = {module: {worker for worker, name, _, _ in rows if name == module} for _, module, _, _ in rows}
    assert all(len(workers) == 1 for workers in workers_of.values()), workers_of
    assert len({worker for worker, *_ in rows}) == 2, "the modules did not spread over both workers"
    ranges = {worker: ports for worker, _, _, ports in rows}
    assert set(_bounds(ranges["gw0"])).isdisjoint(_bounds(ranges["gw1"]))
