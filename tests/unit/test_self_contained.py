"""A clone with nothing beside it must run: no project file may name a path outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from services.cli.fixtures import load_fixture as load_packaged_fixture
from tests.fixtures import FIXTURES_DIR, load_fixture

REPO_ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("services", "tests", "bench", "scripts", "clients", "examples")
# `../x`, a `.parent` climb above the repository, or `parents[N]` past the root all leave the clone.
OUTSIDE = re.compile(r"\.\./|MEMLOOP_SHARED_DIR|[\"'/]shared[\"'/]\s*/|/ \"shared\"")


def _files() -> list[Path]:
    found: list[Path] = []
    for top in SCANNED:
        base = REPO_ROOT / top
        if base.is_dir():
            found += [
                p for p in base.rglob("*") if p.suffix in {".py", ".sh", ".toml", ".cfg"} and "gen" not in p.parts
            ]
    return found


def _climbs_above_root(path: Path, text: str) -> list[str]:
    """`Path(__file__).parents[N]` (and `.parent` chains after it) that resolve outside the repository."""
    hits = []
    for match in re.finditer(r"Path\(__file__\)\.resolve\(\)\.parents\[(\d+)\]((?:\.parent)*)", text):
        depth = int(match.group(1)) + match.group(2).count(".parent")
        if depth > len(path.relative_to(REPO_ROOT).parts) - 1:
            hits.append(match.group(0))
    return hits


def test_no_project_file_names_a_path_outside_the_repository() -> None:
    # Given every source file of the project; when each is scanned
    offenders = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path == Path(__file__).resolve():
            continue
        offenders += [f"{path.relative_to(REPO_ROOT)}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
        offenders += [f"{path.relative_to(REPO_ROOT)}: {hit}" for hit in _climbs_above_root(path, text)]
    # Then none climbs out of the clone
    assert offenders == []


def test_the_demo_ships_the_same_alice_as_the_tests() -> None:
    assert load_packaged_fixture("alice.json") == load_fixture("alice.json")


def test_every_scenario_lives_in_the_project() -> None:
    names = sorted(p.name for p in FIXTURES_DIR.glob("*.json"))
    assert names == ["alice.json", "legacy_learned_procedures.json", "priya_sessions.json"]
