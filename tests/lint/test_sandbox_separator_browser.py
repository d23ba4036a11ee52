"""BK320's premise, checked in the real browser: Chromium splits iframe@sandbox on ASCII
whitespace only, so a no-break space joins two tokens into one it does not know."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    opened = browser.new_page()
    yield opened
    opened.close()


def _scripts_run(page: Any, sandbox: str) -> bool:
    """Whether a script inside an iframe with this sandbox attribute runs."""
    page.set_content("<p>host</p>")
    return page.evaluate(
        """(sandbox) => new Promise((resolve) => {
            window.addEventListener("message", (event) => resolve(event.data === "ran"));
            const frame = document.createElement("iframe");
            frame.setAttribute("sandbox", sandbox);
            frame.srcdoc = "<script>parent.postMessage('ran', '*')<\\/script>";
            document.body.appendChild(frame);
            setTimeout(() => resolve(false), 1500);
        })""",
        sandbox,
    )


@pytest.mark.parametrize("separator", [" ", "\t", "\n"])
def test_ascii_whitespace_separates_sandbox_tokens(page: Any, separator: str) -> None:
    assert _scripts_run(page, f"allow-forms{separator}allow-scripts")


@pytest.mark.parametrize("separator", ["\u00a0", "\u3000", "\u000b"])
def test_other_javascript_whitespace_joins_sandbox_tokens(page: Any, separator: str) -> None:
    import blockkit
    from blockkit.jsstr import JS_WHITESPACE

    assert separator in JS_WHITESPACE  # the platform splits here...
    sandbox = f"allow-forms{separator}allow-scripts"
    assert not _scripts_run(page, sandbox)  # ...the browser does not, and the block's scripts never run
    manifest = {"blockId": "demo-block", "version": "1.0.0", "name": "Demo", "contentRating": "g", "scopes": [],
                "iframe": {"minHeight": 600, "maxHeight": None, "resizable": False, "sandbox": sandbox}}
    from blockkit.engine import ALL_LAYERS, check, source_for

    report = check(source_for(json.dumps(manifest)), layers=ALL_LAYERS)
    assert [f.code for f in report.findings] == ["BK312", "BK320"]
    assert blockkit.validate(manifest).ok  # the platform accepts it: only lint can warn
