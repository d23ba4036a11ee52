"""``blockkit dev`` wired to the local platform, in headless Chromium: a block that reads the
viewer and the catalogue with its token, buys a good through the host's dialog, upscales a
picture to completion, and keeps app storage across a restart of the dev session."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dev" / "wired"


def _text(frame: Any, selector: str, predicate: str, timeout: float = 15_000) -> str:
    frame.wait_for_function(f"() => {{ const t = document.querySelector({selector!r}).textContent; return {predicate}; }}",
                            timeout=timeout)
    return str(frame.eval_on_selector(selector, "e => e.textContent"))


def test_a_block_uses_the_local_platform_end_to_end(host: Callable[..., Any], tmp_path: Path) -> None:
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block)
    run.wait_outcome("ready")
    platform = run.session.platform
    frame = run.frame
    viewer = platform.viewer()
    assert _text(frame, "#viewer", "t !== '?'") == viewer["username"]
    models = _text(frame, "#models", "t !== '?'")
    assert models and not models.startswith("failed"), models

    # A good: the host's consent dialog shows its title and price; confirming buys it.
    balance = platform.state.store and __import__("blockkit.emulator.buzz", fromlist=["balance"]).balance(
        platform.store, platform.clock, viewer["id"])
    frame.click("#buy")
    dialog = run.page.wait_for_selector(".dialog-card[data-type=PURCHASE_GOOD]")
    assert "Sticker pack" in dialog.text_content() and "40 Buzz" in dialog.text_content()
    run.page.click(".dialog-confirm")
    # The store is shared by the session's tests: other tests may have bought one before.
    assert "sticker-pack" in _text(frame, "#entitlements", "t !== 'none'").split(", ")
    after = __import__("blockkit.emulator.buzz", fromlist=["balance"]).balance(platform.store, platform.clock, viewer["id"])
    assert sum(after.values()) == sum(balance.values()) - 40

    # An upscale: submitted, polled to completion, shown.
    frame.click("#run")
    _text(frame, "#upscale", "t !== 'idle'")
    platform.clock.advance(30)  # the emulator's clock: queue 2 s + 3 s a step
    assert _text(frame, "#upscale", "t === 'succeeded'") == "succeeded"
    frame.wait_for_function("() => { const i = document.querySelector('#upscaled'); return i && i.complete && i.naturalWidth > 0; }",
                            timeout=15_000)
    assert frame.eval_on_selector("#upscaled", "i => i.naturalWidth") == 256

    # The trace holds each brokered call with its result.
    calls = [e for e in run.events() if e.get("kind") == "call"]
    assert {"GET_VIEWER", "PURCHASE_GOOD", "SUBMIT_WORKFLOW", "POLL_WORKFLOW"} <= {c["type"] for c in calls}
    assert all(c["ok"] for c in calls), [c for c in calls if not c["ok"]]

    # Storage survives a restart of blockkit dev.
    frame.click("#save")
    assert _text(frame, "#stored", "t === 'saved'") == "saved"
    run.session.stop()
    again = host(block)
    again.wait_outcome("ready")
    assert _text(again.frame, "#stored", "t !== '?'").startswith('"kept bi_dev_')


def test_the_viewer_switcher_signs_out_and_in(host: Callable[..., Any], tmp_path: Path) -> None:
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block)
    run.wait_outcome("ready")
    with run.page.expect_navigation():
        run.page.select_option("#viewer-switch", "")
    run.wait_outcome("ready")
    assert _text(run.frame, "#viewer", "t !== '?'") == "signed out"
    moderator = next(u for u in run.session.platform.users if u.is_moderator)
    with run.page.expect_navigation():
        run.page.select_option("#viewer-switch", str(moderator.id))
    run.wait_outcome("ready")
    assert _text(run.frame, "#viewer", "t !== '?'") == moderator.username
