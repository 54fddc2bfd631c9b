"""Which files a benchmark run writes: `latest.json` is the README's full run, never a partial one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.run_all import failed_modules, write_results


def _report(module: str) -> dict[str, object]:
    return {"modules": {module: {"seconds": 1.0}}, "rows": [{"figure": f"{module} figure", "memloop": 1.0}]}


@pytest.mark.parametrize("complete", [True, False], ids=["full-run", "quick-or-only"])
def test_only_a_complete_run_replaces_latest(tmp_path: Path, complete: bool) -> None:
    # Given: a full run's latest.json
    write_results(_report("full"), tmp_path, complete=True)
    # When: another run is written, complete or not
    written = write_results(_report("second"), tmp_path, complete=complete)
    # Then: its stamped file always exists; latest.json is replaced only by a complete run
    stamped = [p for p in written if p.name != "latest.json"]
    assert len(stamped) == 1 and list(json.loads(stamped[0].read_text())["modules"]) == ["second"]
    latest = json.loads((tmp_path / "latest.json").read_text())
    assert list(latest["modules"]) == ["second" if complete else "full"]
    assert ((tmp_path / "latest.json") in written) == complete


def test_a_module_that_raised_is_named_as_failed() -> None:
    report = {"modules": {"bench_a": {"error": "boom"}, "bench_b": {"seconds": 3.0}}, "rows": []}
    assert failed_modules(report) == ["bench_a"]
