from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from sample_manifests import PAGE_BLOCK

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"

_VALID = PAGE_BLOCK


@pytest.fixture
def manifest() -> dict[str, Any]:
    """A fresh valid manifest to mutate in a test."""
    return copy.deepcopy(_VALID)


@pytest.fixture
def write_manifest(tmp_path: Path) -> Callable[..., Path]:
    def write(content: Any, name: str = "block.manifest.json") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        return path

    return write


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.json") if p.name != "index.json")


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    files = corpus_files()
    if not files:
        pytest.skip("../shared/corpus is not present")
    return files


def codes(report: Any) -> list[str]:
    return [f.code for f in report.findings]
