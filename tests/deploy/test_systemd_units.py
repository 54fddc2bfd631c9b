"""The systemd placement: learning units yield the CPU to serving (weight, nice, SCHED_IDLE)."""

from __future__ import annotations

import configparser
import re

from tests.deploy.manifests import DEPLOY, REPO_ROOT

SYSTEMD = DEPLOY / "systemd"


def _service_section(name: str) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read(SYSTEMD / name, encoding="utf-8")
    return dict(parser["Service"])


def test_learning_units_get_a_small_fraction_of_the_cpu_and_idle_scheduling() -> None:
    learning, serving = _service_section("learning.conf"), _service_section("serving.conf")
    assert int(learning["CPUWeight"]) * 50 <= int(serving["CPUWeight"])
    assert learning["CPUSchedulingPolicy"] == "idle"
    assert int(learning["Nice"]) >= 10 > int(serving["Nice"])
    assert "OMP_NUM_THREADS=1" in learning["Environment"].split()


def test_the_unit_template_runs_each_part_unprivileged_with_a_drain_period() -> None:
    unit = _service_section("memloop@.service")
    assert unit["ExecStart"].endswith("-m services.%i.entrypoints.main")
    assert unit["User"] == "memloop"
    assert unit["KillSignal"] == "SIGTERM"
    assert int(unit["TimeoutStopSec"]) > 10  # longer than the default MEMLOOP_DRAIN_SECONDS


def _directives(name: str, key: str) -> list[str]:
    """Every value of `key` in order: a drop-in resets a list setting such as ExecStart with an empty one."""
    lines = (SYSTEMD / name).read_text(encoding="utf-8").splitlines()
    return [line.split("=", 1)[1].strip() for line in lines if line.startswith(f"{key}=")]


def test_serving_loop_runs_servings_entrypoint_in_the_loop_role_at_learning_priority() -> None:
    # The template's services.%i would be services.serving-loop, which is no module: the drop-in
    # clears ExecStart and runs serving's entrypoint with MEMLOOP_SERVING_ROLE=loop.
    assert _directives("serving-loop.conf", "ExecStart") == [
        "",
        "/opt/memloop/.venv/bin/python -m services.serving.entrypoints.main",
    ]
    assert "MEMLOOP_SERVING_ROLE=loop" in _service_section("serving-loop.conf")["Environment"].split()
    # Installed beside learning.conf, whose header names it among the learning units
    header = (SYSTEMD / "learning.conf").read_text(encoding="utf-8").split("[Service]")[0]
    assert "memloop@serving-loop" in header and "serving-loop" in header.split("for u in ")[1].split(";")[0]
    assert "learning.conf" in (SYSTEMD / "serving-loop.conf").read_text(encoding="utf-8")


def test_the_documented_settings_are_settings_the_services_read() -> None:
    code = "".join(p.read_text(encoding="utf-8") for p in (REPO_ROOT / "services").rglob("*.py"))
    documented = set(re.findall(r"^(MEMLOOP_[A-Z0-9_]+)=", (DEPLOY / "memloop.env.example").read_text(), re.M))
    for unit in (SYSTEMD / "memloop@.service", *SYSTEMD.glob("*.conf")):
        documented |= set(re.findall(r"MEMLOOP_[A-Z0-9_]+", unit.read_text()))
    # NAME_FILE is the file form every secret-like setting accepts (services.common.settings.env_secret)
    assert documented and {name for name in documented if name.removesuffix("_FILE") not in code} == set()


def test_memory_ingestion_has_its_own_idle_unit_running_memory_as_the_ingest_role() -> None:
    """Issue 15: memory's ingestion is a process of its own, at the learning units' priority."""
    unit, learning = _service_section("memloop-memory-ingest.service"), _service_section("learning.conf")
    assert unit["ExecStart"].endswith("-m services.memory.entrypoints.main")
    assert "MEMLOOP_MEMORY_ROLE=ingest" in unit["Environment"].split()
    for key in ("CPUSchedulingPolicy", "Nice", "CPUWeight"):
        assert unit[key] == learning[key], key
    assert unit["User"] == "memloop"
