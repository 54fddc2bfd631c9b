"""The committed stubs must be exactly what `make protos` generates from protos/ today."""

from __future__ import annotations

import filecmp
import re
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


_FILLER = {"the", "a", "an", "its", "it", "of", "this", "one", "id", "ids", "s"}


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w} - _FILLER


def test_no_comment_only_repeats_the_name_it_documents() -> None:
    # Given every declaration with a name and the comment above it
    parrots = []
    for proto in sorted((ROOT / "protos" / "memloop" / "v1").glob("*.proto")):
        lines = proto.read_text().splitlines()
        for index, line in enumerate(lines):
            found = re.match(r"\s*(?:repeated\s+|map<[^>]+>\s+)?[\w.]+\s+(\w+)\s*=\s*\d+;", line) or re.match(
                r"\s*(?:message|enum|service|rpc|oneof)\s+(\w+)", line
            )
            comment = lines[index - 1].strip()
            if not found or not comment.startswith("//"):
                continue
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", found.group(1)).lower()
            # Then the comment says something the name does not ("// Tenant." above `tenant` says nothing)
            if _words(comment[2:]) <= _words(name.replace("_", " ")) | {"why", "when", "who", "state", "kind"}:
                parrots.append(f"{proto.name}:{index + 1}: {comment} above {found.group(1)}")
    assert parrots == [], "\n".join(parrots)


def test_protos_pass_buf_lint_with_the_committed_configuration() -> None:
    # Given the buf CLI from the buf-bin wheel and protos/buf.yaml (STANDARD + COMMENTS)
    buf = Path(sys.executable).parent / "buf"
    # When buf lints the module
    result = subprocess.run([str(buf), "lint"], cwd=ROOT / "protos", capture_output=True, text=True, check=False)
    # Then it reports nothing
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
