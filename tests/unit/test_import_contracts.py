"""The import contracts in pyproject.toml hold: memory's capabilities build on core only, no service
imports another service, and domain packages reach no framework (docs/ARCHITECTURE.md draws them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept() -> None:
    # Given: the contracts declared in pyproject.toml
    lint_imports = Path(sys.executable).parent / "lint-imports"
    # When: import-linter checks the services package
    result = subprocess.run(
        [str(lint_imports), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    # Then: every contract is kept, and there are at least the three the architecture names
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert result.stdout.count("KEPT") >= 3
