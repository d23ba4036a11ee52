"""The host page's trace panel shows the block's own requests to the local platform, in headless
Chromium: the opaque-origin frame fetches the emulated catalogue directly, and each request appears
with its method, path, status and duration, a failure marked, in order with the bridge messages."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dev" / "wired"
WAIT_MS = 15_000
MODELS = "GET /api/v1/blocks/models?limit=3"  # the wired block's own fetch after BLOCK_INIT
REFUSED = "GET /api/v1/blocks/models?limit=nope"


def _rows(page: Any) -> list[dict[str, Any]]:
    return page.eval_on_selector_all("#trace-list > li", """rows => rows.map(r => ({
        dir: r.querySelector('.dir').textContent, type: r.querySelector('.type').textContent,
        summary: r.querySelector('.summary').textContent, bad: r.classList.contains('row-bad'),
        request: r.classList.contains('row-request')}))""")


def _wait_for_row(page: Any, label: str) -> None:
    page.wait_for_function("""(label) => [...document.querySelectorAll('#trace-list > li.row-request .type')]
        .some(e => e.textContent === label)""", arg=label, timeout=WAIT_MS)


def test_the_blocks_own_requests_are_in_the_host_pages_trace(host: Callable[..., Any], tmp_path: Path) -> None:
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block, consented=True)
    run.wait_outcome("ready")
    page = run.page
    _wait_for_row(page, MODELS)

    # The block's own fetch, from its opaque origin, that the platform refuses; then a bridge message.
    platform = run.session.platform
    (token,) = platform.tokens.values()
    status = run.frame.evaluate("""async ([base, token, url]) => {
        const response = await fetch(base + url, { headers: { authorization: 'Bearer ' + token } });
        parent.postMessage({ type: 'GET_VIEWER', payload: { requestId: 'after-the-fetch' } }, '*');
        return response.status;
    }""", [platform.base_url, token, REFUSED.split(" ", 1)[1]])
    assert status == 400
    _wait_for_row(page, REFUSED)
    page.wait_for_function("""() => [...document.querySelectorAll('#trace-list > li .summary')]
        .some(e => e.textContent.includes('after-the-fetch'))""", timeout=WAIT_MS)

    rows = _rows(page)
    ok = next(r for r in rows if r["type"] == MODELS)
    assert ok["dir"] == "block → platform" and not ok["bad"]
    assert ok["summary"].startswith("HTTP 200 in ") and ok["summary"].endswith(" ms"), ok
    refused = next(r for r in rows if r["type"] == REFUSED)
    assert refused["bad"] and refused["summary"].startswith("HTTP 400 failed in "), refused
    # The platform's reason, said once.
    assert refused["summary"].count("HTTP 400") == 1 and "limit" in refused["summary"], refused

    # In order: BLOCK_READY, then the failed request, then the message the block posted after it.
    ready = next(i for i, r in enumerate(rows) if r["type"] == "BLOCK_READY")
    refused_at = next(i for i, r in enumerate(rows) if r["type"] == REFUSED)
    after = next(i for i, r in enumerate(rows) if r["dir"] == "block → host" and "after-the-fetch" in r["summary"])
    assert ready < refused_at < after, [r["type"] for r in rows]

    # The same events as the trace file's: the block's own calls, via http, each with its duration.
    shown = page.evaluate("() => window.__blockkit.requests")
    recorded = [e for e in run.events() if e.get("kind") == "call" and e.get("via") == "http"]
    assert [e["seq"] for e in shown] == [e["seq"] for e in recorded]
    assert all(isinstance(e["durationMs"], float) and e["durationMs"] >= 0 for e in recorded)


def test_a_page_loaded_later_shows_only_its_own_requests(host: Callable[..., Any], tmp_path: Path) -> None:
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block, consented=True)
    run.wait_outcome("ready")
    _wait_for_row(run.page, MODELS)
    run.page.reload()
    run.wait_outcome("ready")
    _wait_for_row(run.page, MODELS)
    # The second page load's own models request only, not the first load's too.
    assert [r["type"] for r in _rows(run.page) if r["request"]] == [MODELS]
