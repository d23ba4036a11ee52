"""Every real manifest gets a verdict, with positions, and no crash."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import blockkit
from tests.conftest import CORPUS, corpus_files


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name[:80])
def test_every_corpus_file_gets_a_sensible_verdict(path) -> None:
    report = blockkit.validate_file(path)
    (file,) = report.files
    assert not [f for f in file.findings if f.code == "BK000"], file.findings
    text = path.read_bytes().decode("utf-8", errors="replace")
    line_count = text.count("\n") + 1
    for finding in file.findings:
        assert 1 <= finding.line <= line_count and finding.column >= 1
        assert finding.message and finding.code.startswith("BK")


def test_foreign_files_are_rejected_cleanly(corpus) -> None:
    foreign = sorted((CORPUS / "foreign").glob("*.json"))
    assert foreign
    for path in foreign:
        report = blockkit.validate_file(path)
        found = {f.code for f in report.findings}
        assert not report.ok
        # they lack the manifest's required keys
        assert "BK101" in found


def test_cli_over_the_whole_corpus_in_one_call(corpus) -> None:
    result = subprocess.run([sys.executable, "-m", "blockkit.cli", "validate", "--format", "json",
                             *map(str, corpus)], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["summary"]["files"] == len(corpus)
    assert "Traceback" not in result.stderr
