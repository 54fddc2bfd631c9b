"""The committed stubs must be exactly what `make protos` generates from protos/ today."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_committed_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    # Given a fresh generation from the .proto files
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protos.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    # When compared with the committed stubs
    fresh, committed = _tree(tmp_path), _tree(ROOT / "services" / "common" / "gen")
    # Then the same files exist with the same bytes
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in fresh if not filecmp.cmp(fresh[name], committed[name], shallow=False)]
    assert stale == [], f"stale generated stubs, run `make protos`: {stale}"


def test_every_proto_element_has_a_comment() -> None:
    # Given every .proto file
    missing = []
    for proto in sorted((ROOT / "protos" / "memloop" / "v1").glob("*.proto")):
        lines = proto.read_text().splitlines()
        for index, line in enumerate(lines):
            stripped = line.strip()
            declares = stripped.startswith(("message ", "enum ", "service ", "rpc ")) or (
                stripped.endswith(";") and "=" in stripped and not stripped.startswith(("option", "syntax", "//"))
            )
            # Then each declaration is preceded by a one-line // comment
            if declares and not lines[index - 1].strip().startswith("//"):
                missing.append(f"{proto.name}:{index + 1}: {stripped}")
    assert missing == []
