"""``blockkit explain`` and ``blockkit rules``: every rule documents itself in four parts."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from blockkit.fix import fixability
from blockkit.rules import load_all

REGISTRY = load_all()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_every_rule_has_four_nonempty_parts(code: str) -> None:
    rule = REGISTRY[code]
    assert re.fullmatch(r"BK\d{3}", code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
    doc = rule.doc
    for part in (doc.summary, doc.what, doc.why, doc.example, doc.fix):
        assert part.strip(), f"{code}: an empty documentation part"
    assert "\n" not in doc.summary
    assert rule.severity in ("error", "warning", "info")
    assert rule.layer in ("parse", "schema", "server", "lint", "diff", "bundle")
    assert code[2] == {"parse": "0", "schema": "1", "server": "2", "lint": "3", "diff": "4", "bundle": "5"}[rule.layer]


def test_rule_names_are_unique_and_explain_accepts_them() -> None:
    by_name: dict[str, list[str]] = {}
    for code, rule in sorted(REGISTRY.items()):
        by_name.setdefault(rule.name, []).append(code)
    assert {name: codes for name, codes in by_name.items() if len(codes) > 1} == {}
    result = run("explain", "closed-object-unknown-key")
    assert result.returncode == 0 and result.stdout.startswith("BK106 (closed-object-unknown-key)")


def test_explain_prints_the_four_parts_and_the_facts() -> None:
    result = run("explain", "bk110")
    assert result.returncode == 0
    rule = REGISTRY["BK110"]
    out = result.stdout
    assert out.startswith(f"BK110 (server-owned-key): {rule.doc.summary}\n")
    for title, text in (("What it does", rule.doc.what), ("Why it matters", rule.doc.why),
                        ("Example", rule.doc.example), ("Fix", rule.doc.fix)):
        assert f"## {title}\n{text}\n" in out
    assert "Severity: error" in out and "Layer:    schema" in out
    assert "Autofix:  yes, safe: `blockkit fix` will remove keys the server owns" in out


def test_explain_by_name_and_in_json() -> None:
    result = run("explain", "--format", "json", "iframe-member-missing")
    assert result.returncode == 0
    info = json.loads(result.stdout)
    assert info["code"] == "BK216" and info["fixable"] == "unsafe" and info["what"]
    assert run("explain", "BK401").stdout.count("## ") == 4


@pytest.mark.parametrize(("query", "suggestion"), [("BK1100", "BK110"), ("server-owned", "BK110"), ("zzz", None)])
def test_unknown_code_exits_2_with_suggestions(query: str, suggestion: str | None) -> None:
    result = run("explain", query)
    assert result.returncode == 2 and result.stdout == ""
    assert f"no rule '{query}'" in result.stderr
    if suggestion:
        assert suggestion in result.stderr
    else:
        assert "blockkit rules" in result.stderr


def test_rules_lists_every_rule() -> None:
    text = run("rules")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["CODE", "SEVERITY", "LAYER", "FIX", "NAME", "SUMMARY"]
    assert [line.split()[0] for line in lines[1:]] == sorted(REGISTRY)
    listed = json.loads(run("rules", "--format", "json").stdout)
    assert [r["code"] for r in listed] == sorted(REGISTRY)
    for entry in listed:
        rule = REGISTRY[entry["code"]]
        assert entry["severity"] == rule.severity and entry["layer"] == rule.layer
        assert entry["fixable"] == fixability(rule.code)
        assert all(entry[k] for k in ("summary", "what", "why", "example", "fix"))
