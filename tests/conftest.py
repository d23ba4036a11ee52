from __future__ import annotations

import copy
import json
import os
import signal
from pathlib import Path
from typing import Any, Callable

import pytest

from blockkit.dev.browser import chromium_path, launch_chromium, playwright_available
from sample_manifests import PAGE_BLOCK

# A shell without job control (`bash -c '... &'`, nohup, some CI runners) starts a background
# command with SIGINT ignored; a Python started so keeps it ignored (no KeyboardInterrupt) and
# hands that on to every child it runs. The tests that press Ctrl-C on a command (dev, new's
# prompts, the fork pool) then wait for an exit that never comes. A handler, unlike an ignored
# signal, is reset to the default across exec, so the commands the tests start behave as they do
# from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
# Two corpora of manifests. The real one (../shared/corpus, beside the checkout in CI) is
# the check that counts; ours (tests/fixtures/corpus, written by us in the same shapes)
# makes the same tests run on any clone. A test that names a real file uses CORPUS.
CORPUS = SHARED_CORPUS = REPO.parent / "shared" / "corpus"
OWN_CORPUS = REPO / "tests" / "fixtures" / "corpus"
CORPORA = {"own": OWN_CORPUS, "shared": SHARED_CORPUS}
SHARED_MISSING = "../shared/corpus is not present"

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


def corpus_files(root: Path = SHARED_CORPUS) -> list[Path]:
    """The manifests of one corpus (none when it is absent)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.json") if p.name != "index.json")


def corpus_documents(paths: list[Path]) -> list[dict[str, Any]]:
    """The JSON objects among ``paths`` (files that are not JSON, or not an object, are left out)."""
    documents = []
    for path in paths:
        try:
            document = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(document, dict):
            documents.append(document)
    return documents


def corpus_file_params() -> list[Any]:
    """Every manifest of both corpora, for tests run once per file; one skip stands for the
    real corpus where it is absent."""
    params = [pytest.param(path, id=f"own/{path.relative_to(OWN_CORPUS)}") for path in corpus_files(OWN_CORPUS)]
    shared = corpus_files(SHARED_CORPUS)
    params += [pytest.param(path, id=f"shared/{path.parent.name}/{path.name[:60]}") for path in shared]
    if not shared:
        params.append(pytest.param(None, id="shared", marks=pytest.mark.skip(reason=SHARED_MISSING)))
    return params


@pytest.fixture(params=sorted(CORPORA))
def corpus_root(request: pytest.FixtureRequest) -> Path:
    """The folder of one corpus: the test runs once on ours and once on the real one."""
    root = CORPORA[request.param]
    if not corpus_files(root):
        assert request.param == "shared", f"{root} holds no manifests"  # ours ships with the tests
        pytest.skip(SHARED_MISSING)
    return root


@pytest.fixture
def corpus(corpus_root: Path) -> list[Path]:
    return corpus_files(corpus_root)


def codes(report: Any) -> list[str]:
    return [f.code for f in report.findings]


# CI installs every heavy component (chromium, node and npm, pre-commit), so there a test that
# skips for want of one means a broken set-up, not an optional extra. .ci/run sets this variable;
# a developer's plain `bash scripts/test.sh` keeps the skips.
REQUIRE_TOOLS = "BLOCKKIT_REQUIRE_TOOLS"
# Skips that stay skips even in CI: they depend on who runs the tests or on shared/ beside the
# checkout, not on an installable tool.
# A checkout (and its venv) in a private home directory (0700): no other account can run its Python.
OTHER_ACCOUNT_CANNOT_RUN = "another account cannot run this test's Python"
_LEGITIMATE_SKIPS = ("root reads anything", SHARED_MISSING, OTHER_ACCOUNT_CANNOT_RUN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not os.environ.get(REQUIRE_TOOLS) or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(allowed in reason for allowed in _LEGITIMATE_SKIPS):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped where {REQUIRE_TOOLS} is set (CI must run this test): {reason}"


def browser_missing() -> str | None:
    if not playwright_available():
        return "Playwright for Python is not installed"
    if chromium_path() is None:
        return "Chromium is not installed at /usr/bin/chromium"
    return None


@pytest.fixture(scope="session")
def browser() -> Any:
    """One headless Chromium for the whole run: Playwright's sync API allows one driver at a time."""
    missing = browser_missing()
    if missing:
        # CI installs both: there a missing browser is a broken setup, not a skip.
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the language-server tests first.

    They drive ``blockkit lsp`` with asyncio (pytest-lsp on pytest-asyncio). Once the session's
    browser has started, Playwright's sync API keeps its event loop marked as running in the main
    thread, and asyncio refuses to start another there ("cannot be called from a running event
    loop"). Every other test keeps its order (the sort is stable).
    """
    items.sort(key=lambda item: 0 if "lsp" in item.path.parts else 1)
