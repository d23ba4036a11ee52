"""Every manifest of both corpora gets a verdict, with positions, and no crash."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import blockkit
from tests.conftest import corpus_file_params


@pytest.mark.parametrize("path", corpus_file_params())
def test_every_corpus_file_gets_a_sensible_verdict(path: Path) -> None:
    report = blockkit.validate_file(path)
    (file,) = report.files
    assert not [f for f in file.findings if f.code == "BK000"], file.findings
    text = path.read_bytes().decode("utf-8", errors="replace")
    line_count = text.count("\n") + 1
    for finding in file.findings:
        assert 1 <= finding.line <= line_count and finding.column >= 1
        assert finding.message and finding.code.startswith("BK")


def test_foreign_files_are_rejected_cleanly(corpus_root: Path) -> None:
    foreign = sorted((corpus_root / "foreign").glob("*.json"))
    assert foreign
    for path in foreign:
        report = blockkit.validate_file(path)
        found = {f.code for f in report.findings}
        assert not report.ok
        # they lack the manifest's required keys
        assert "BK101" in found


def test_cli_over_the_whole_corpus_in_one_call(corpus: list[Path]) -> None:
    result = subprocess.run([sys.executable, "-m", "blockkit.cli", "validate", "--format", "json",
                             *map(str, corpus)], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["summary"]["files"] == len(corpus)
    assert "Traceback" not in result.stderr
