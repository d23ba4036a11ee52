"""The guide's rule index (docs/rules.md) is generated from the rules' docs and must not go stale."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from blockkit.rules import load_all

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "rule_index.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("rule_index", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _index_rows(readme: str) -> dict[str, str]:
    start, end = readme.index("<!-- rules:start -->"), readme.index("<!-- rules:end -->")
    rows = {}
    for line in readme[start:end].splitlines():
        if line.startswith("| BK"):
            rows[line.split("|")[1].strip()] = line
    return rows


PAGE = REPO / "docs" / "rules.md"


def test_readme_index_is_current() -> None:
    readme = PAGE.read_text(encoding="utf-8")
    rows = _index_rows(readme)
    registry = load_all()
    stale = "docs/rules.md's rule index is stale: run `python scripts/rule_index.py`"
    assert sorted(rows) == sorted(registry), stale
    for code, rule in registry.items():
        assert f"`{rule.name}`" in rows[code] and rule.layer in rows[code] and rule.severity in rows[code], stale
        assert " ".join(rule.doc.summary.split()).replace("|", "\\|") in rows[code], stale
    assert _script().with_index(readme, _script().index_markdown()) == readme, stale


def test_check_mode_detects_staleness(tmp_path: Path) -> None:
    readme = PAGE.read_text(encoding="utf-8")
    copy = tmp_path / "rules.md"
    copy.write_text(readme.replace("| BK110 |", "| BK110 (old) |"), encoding="utf-8")
    run = [sys.executable, str(SCRIPT), "--readme", str(copy)]
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 1
    assert subprocess.run(run, capture_output=True).returncode == 0  # rewrites it
    assert copy.read_text(encoding="utf-8") == readme
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 0


def test_only_the_text_between_the_markers_changes() -> None:
    module = _script()
    readme = "# Title\n\nbefore\n<!-- rules:start -->\nold\n<!-- rules:end -->\nafter\n"
    assert module.with_index(readme, "NEW\n") == "# Title\n\nbefore\n<!-- rules:start -->\nNEW\n<!-- rules:end -->\nafter\n"
    with pytest.raises(module.MarkersMissing):
        module.with_index("# no markers\n", "NEW\n")
