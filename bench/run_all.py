"""`python -m bench.run_all [--quick]`: every benchmark, one summary table, one JSON file.

Each module exposes `run(quick) -> list[row]` with the keys figure, memloop, baseline, ratio, goal,
met (True, False, or None for a figure that is only reported). A module that raises becomes one
failed row carrying its error; the run goes on. Results land in `bench/results/<timestamp>.json`
(and, for a full run of every module, `bench/results/latest.json`) with the machine (cores,
memory, load average before and after each module) and the versions that matter (Python, torch,
faiss, grpc, numpy, PostgreSQL, nats).

Absolute times drift on a shared machine; ratios measured in the same run hold better. The load
average is recorded next to every module's figures for that reason.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._harness import Row, load_average, row

RESULTS = Path(__file__).resolve().parent / "results"

#: --quick only: module constants lowered so the whole smoke run stays under 5 minutes on 2 cores.
#: bench_deletion seeds its user through ApplyLearning (~150 s for 10,000 memories on this machine);
#: the full run keeps the issue's 10,000.
QUICK_OVERRIDES: dict[str, dict[str, int]] = {"bench_deletion": {"USER_MEMORIES": 1_000}}


@dataclass(frozen=True)
class Module:
    name: str
    run: Callable[[bool], list[Row]] | None
    note: str = ""


def _consolidation_rows(quick: bool) -> list[Row]:
    """`bench_consolidation` has no `run()`: its race and its in-memory job timings, as rows."""
    from bench import bench_consolidation as pure
    from tests.harness.consolidation_store import WriteBackMode

    races, replaced = pure.race_everywhere(WriteBackMode.REPLACE)
    _, merged = pure.race_everywhere(WriteBackMode.MERGE)
    rows = [
        row(
            f"in memory: memories destroyed, Priya, {races} raced positions, merge vs replace write-back",
            merged,
            replaced,
            None,
            "0 (merge)",
            merged == 0,
        )
    ]
    small_n, large_n = (1_000, 10_000) if quick else (10_000, 100_000)
    small, large = pure.time_job(small_n), pure.time_job(large_n)
    rows.append(
        row(
            f"in memory: job s, one user with {large_n:,} memories (baseline: {small_n:,}); ratio = time growth "
            f"for x{large_n // small_n} memories",
            round(large["total"], 2),
            round(small["total"], 2),
            round(large["total"] / small["total"], 1),
        )
    )
    return rows


def _load(name: str) -> Module:
    """The module's `run`, imported lazily: a module not written yet is skipped with a note."""
    try:
        module = importlib.import_module(f"bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"bench.{name}":
            return Module(name, None, f"bench/{name}.py is not there: skipped")
        raise
    run: Callable[[bool], list[Row]] = module.run

    def run_with_overrides(quick: bool) -> list[Row]:
        if quick:
            for constant, value in QUICK_OVERRIDES.get(name, {}).items():
                if not hasattr(module, constant):
                    print(f"   note: {name}.{constant} no longer exists; quick override not applied", flush=True)
                    continue
                print(f"   quick: {name}.{constant} = {value:,} (full run: {getattr(module, constant):,})", flush=True)
                setattr(module, constant, value)
        return run(quick)

    return Module(name, run_with_overrides)


def modules() -> list[Module]:
    """Serving and pipeline first: they start the whole stack and are the most load-sensitive."""
    found = [_load("bench_serving"), _load("bench_pipeline"), _load("bench_relay"), _load("bench_retrieval")]
    found.append(_load("bench_deletion"))
    found.append(_load("bench_context"))
    found.append(_load("bench_search"))  # issue 15: SearchMemories on memory's own partitioned index
    found.append(Module("bench_consolidation", _consolidation_rows))
    found.append(_load("bench_consolidation_pg"))
    found.append(_load("bench_redaction"))
    found.append(_load("bench_policy"))  # policy's reading of others' text, and its adversarial worst
    found.append(_load("bench_cluster"))  # issue 19: 2 workers + 2 memory replicas against 1 + 1
    return found


def machine() -> dict[str, Any]:
    import faiss
    import grpc
    import numpy
    import torch

    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "cpu": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "faiss": faiss.__version__,
        "grpc": grpc.__version__,
        "numpy": numpy.__version__,
    }
    for key, argv in {
        "postgres": [_embedded_bin("postgres"), "--version"],
        "nats_server": [str(Path(sys.executable).parent / "nats-server"), "--version"],
    }.items():
        try:
            info[key] = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError) as exc:
            info[key] = f"unknown ({type(exc).__name__})"
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _embedded_bin(name: str) -> str:
    from services.common.infra import postgres_runtime

    return str(postgres_runtime.bin_dir() / name)


def run_all(quick: bool, only: Sequence[str] = ()) -> dict[str, Any]:
    started = time.perf_counter()
    results: list[Row] = []
    timings: dict[str, Any] = {}
    for module in modules():
        if only and module.name not in only:
            continue
        if module.run is None:
            print(f"== {module.name}: {module.note}", flush=True)
            timings[module.name] = {"skipped": module.note}
            continue
        print(f"== {module.name} ({'quick' if quick else 'full'}), load average {load_average()}", flush=True)
        begun, load_before = time.perf_counter(), load_average()
        try:
            rows = module.run(quick)
            error = ""
        except (Exception, SystemExit) as exc:  # some modules end a failed measurement with SystemExit
            traceback.print_exc()
            rows = [row(f"{module.name} FAILED: {type(exc).__name__}: {exc}"[:300], None, None, None, "runs", False)]
            error = "".join(traceback.format_exception(exc))[-4000:]
        seconds = time.perf_counter() - begun
        for item in rows:
            item["module"] = module.name
        results.extend(rows)
        timings[module.name] = {
            "seconds": round(seconds, 1),
            "load_average_before": load_before,
            "load_average_after": load_average(),
        } | ({"error": error} if error else {})
        print(f"   {module.name}: {seconds:.0f} s, load average after {load_average()}", flush=True)
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": machine(),
        "modules": timings,
        "rows": results,
    }


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.2f}".rstrip("0").rstrip(".")
    return str(value)


def print_table(rows: Sequence[Row]) -> None:
    """figure | memloop | baseline | ratio | goal | met?, one line per row, figure wrapped at 90."""
    header = ("figure", "memloop", "baseline", "ratio", "goal", "met?")
    widths = (90, 14, 14, 7, 30, 4)
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for item in rows:
        met = {True: "yes", False: "NO", None: "-"}[item.get("met")]
        figure = str(item["figure"])
        cells = (
            _cell(item.get("memloop")),
            _cell(item.get("baseline")),
            _cell(item.get("ratio")),
            str(item.get("goal", "")),
            met,
        )
        lines = [figure[i : i + widths[0]] for i in range(0, max(1, len(figure)), widths[0])]
        pairs = enumerate(zip(cells, widths[1:], strict=True))
        rest = "  ".join(c.rjust(w) if i < 3 else c.ljust(w) for i, (c, w) in pairs)
        print(lines[0].ljust(widths[0]) + "  " + rest)
        for more in lines[1:]:
            print("  " + more)


def markdown_table(rows: Sequence[Row]) -> str:
    """The same table in Markdown, for the README."""
    out = ["| figure | memloop | baseline | ratio | goal | met? |", "|---|---:|---:|---:|---|---|"]
    for item in rows:
        met = {True: "yes", False: "**no**", None: "-"}[item.get("met")]
        cells = [str(item["figure"]).replace("|", "\\|")]
        cells += [_cell(item.get(k)) for k in ("memloop", "baseline", "ratio")]
        cells += [str(item.get("goal", "")), met]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _without_nan(value: Any) -> Any:
    """NaN (a figure a module could not measure) as null: NaN is not JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nan(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description="Run every memloop benchmark and print one summary table.")
    parser.add_argument("--quick", action="store_true", help="smaller sizes everywhere; under 5 minutes on 2 cores")
    parser.add_argument("--only", nargs="*", default=(), help="module names to run (default: all)")
    parser.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    parser.add_argument(
        "--fail-on-error",
        action="store_true",
        help="exit 1 when a module raised (CI's smoke run: a benchmark that no longer runs is a bug)",
    )
    args = parser.parse_args()
    report = run_all(args.quick, args.only)
    print()
    print(f"memloop benchmarks ({'quick' if args.quick else 'full'}), {report['seconds']:.0f} s, {report['when']}")
    m = report["machine"]
    print(
        f"machine: {m['cores']} cores, {m['memory_gb']} GB, {m['cpu']}; Python {m['python']}, torch {m['torch']}, "
        f"faiss {m['faiss']}, grpc {m['grpc']}"
    )
    print_table(report["rows"])
    if args.markdown:
        print()
        print(markdown_table(report["rows"]))
    for written in write_results(report, RESULTS, complete=not (args.quick or args.only)):
        print(f"written: {written}")
    failed = failed_modules(report)
    if failed and args.fail_on_error:
        raise SystemExit(f"benchmark modules that raised: {', '.join(failed)}")


def write_results(report: dict[str, Any], folder: Path, *, complete: bool) -> list[Path]:
    """The run as `<UTC stamp>.json`, and as `latest.json` only when `complete` (every module at full
    size): the README's table is read from it, and a quick or `--only` run left in its place would
    pass for the latest full run (it did twice: a bench_serving re-run replaced the full table)."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(_without_nan(report), indent=2, default=str, allow_nan=False)
    paths = [folder / f"{stamp}.json"] + ([folder / "latest.json"] if complete else [])
    for path in paths:
        path.write_text(text)
    return paths


def failed_modules(report: dict[str, Any]) -> list[str]:
    """The modules of `report` that raised instead of measuring (their error is in `modules`)."""
    return [name for name, timing in report["modules"].items() if "error" in timing]


if __name__ == "__main__":
    main()
