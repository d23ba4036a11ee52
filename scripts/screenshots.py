"""Take the guide's screenshots (docs/orchestration-and-goods.md) of ``blockkit dev`` in headless Chromium.

    python scripts/screenshots.py [--out docs/screenshots] [--browser PATH]

Writes ``purchase-dialog.png`` (the host page's goods purchase dialog, open over the wired
fixture block), ``upscale-finished.png`` (the same block showing a finished upscale),
``consent-step.png`` (the host's consent step over a fresh ``generation`` scaffold, on a viewer's
first visit) and ``generation-done.png`` (the same block after Allow, with its image). The blocks
and the local platform's data live in a temporary folder, so the tree stays clean. No test
depends on this script.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "dev" / "wired"
VIEWPORT = {"width": 1400, "height": 860}
WAIT_MS = 20_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--browser", help="the Chromium to drive (default: as blockkit dev --check finds it)")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from blockkit.dev.browser import launch_chromium, require_browser
    from blockkit.dev.errors import DevError
    from blockkit.dev.session import DevOptions, DevSession

    args.out.mkdir(parents=True, exist_ok=True)
    try:
        executable = require_browser(args.browser)
    except DevError as exc:
        print(f"screenshots: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="blockkit-shots-") as scratch:
        _generation_shots(Path(scratch), args.out, executable)
        block = Path(scratch) / "wired"
        shutil.copytree(FIXTURE, block)
        options = DevOptions(block_dir=block, trace_path=Path(scratch) / "trace.jsonl",
                             platform_dir=Path(scratch) / "platform")
        with DevSession(options) as session, sync_playwright() as playwright:
            session.platform.grant_declared()  # this block's first visit is not what these two shots show
            browser = launch_chromium(playwright, executable)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(session.page_url)
                page.wait_for_function("() => window.__blockkit && window.__blockkit.outcome === 'ready'",
                                       timeout=WAIT_MS)
                frame = page.wait_for_selector("#block-frame").content_frame()
                frame.wait_for_function("() => document.querySelector('#balance').textContent !== '?'",
                                        timeout=WAIT_MS)

                frame.click("#buy")
                page.wait_for_selector(".dialog-card[data-type=PURCHASE_GOOD]", timeout=WAIT_MS)
                shot = args.out / "purchase-dialog.png"
                page.screenshot(path=str(shot))
                print(shot)
                page.click(".dialog-confirm")
                frame.wait_for_function("() => document.querySelector('#purchase').textContent === 'bought'",
                                        timeout=WAIT_MS)

                frame.click("#run")
                frame.wait_for_function("() => document.querySelector('#upscale').textContent !== 'idle'",
                                        timeout=WAIT_MS)
                session.platform.clock.advance(30)  # the emulated queue and the upscale step's time
                frame.wait_for_function(
                    "() => { const i = document.querySelector('#upscaled');"
                    " return i && i.complete && i.naturalWidth > 0; }", timeout=WAIT_MS)
                shot = args.out / "upscale-finished.png"
                page.screenshot(path=str(shot))
                print(shot)
            finally:
                browser.close()
    return 0


def _generation_shots(scratch: Path, out: Path, executable: str) -> None:
    import subprocess

    from playwright.sync_api import sync_playwright

    from blockkit.dev.browser import launch_chromium
    from blockkit.dev.session import DevOptions, DevSession

    block = scratch / "generation"
    subprocess.run([sys.executable, "-m", "blockkit.cli", "new", str(block), "--template", "generation", "--defaults",
                    "--name", "Lighthouse Studio"], check=True, capture_output=True)
    options = DevOptions(block_dir=block, trace_path=scratch / "generation-trace.jsonl",
                         platform_dir=scratch / "generation-platform")
    with DevSession(options) as session, sync_playwright() as playwright:
        browser = launch_chromium(playwright, executable)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(session.page_url)
            page.wait_for_function("() => window.__blockkit && window.__blockkit.outcome === 'ready'", timeout=WAIT_MS)
            frame = page.wait_for_selector("#block-frame").content_frame()
            frame.click("#pick")
            page.wait_for_selector("#dialog-pick option", state="attached", timeout=WAIT_MS)
            page.select_option("#dialog-pick", page.eval_on_selector("#dialog-pick option", "o => o.value"))
            page.click(".dialog-confirm")
            frame.click("#generate")
            page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]", timeout=WAIT_MS)
            shot = out / "consent-step.png"
            page.screenshot(path=str(shot))
            print(shot)
            page.click(".consent-allow")
            frame.wait_for_function(
                "() => { const i = document.querySelector('#images img'); return i && i.complete && i.naturalWidth > 0; }",
                timeout=60_000)
            shot = out / "generation-done.png"
            page.screenshot(path=str(shot))
            print(shot)
        finally:
            browser.close()


if __name__ == "__main__":
    raise SystemExit(main())
