"""The host page's dialogs in headless Chromium: pickers, upload, Buy Buzz and the goods purchase.

Each request opens a dialog in the host page (as the platform asks the viewer); what the
developer chooses goes back to the block, and what confirming buys is in the local platform's
store afterwards. Cancelling changes nothing: a picker or upload answers the platform's bare
``{requestId}``, Buy Buzz ``{purchased: false}``, a good ``CANCELED``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator.services import buzz, goods

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dev" / "wired"
# A 1x1 PNG, as a viewer's file.
DOT_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2a4e8d10000000049454e44ae426082"
)


def _text(frame: Any, selector: str, predicate: str, timeout: float = 15_000) -> str:
    frame.wait_for_function(f"() => {{ const t = document.querySelector({selector!r}).textContent; return {predicate}; }}",
                            timeout=timeout)
    return str(frame.eval_on_selector(selector, "e => e.textContent"))


@pytest.fixture
def wired(host: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    # A store of its own: a good is owned once, so another test's purchase would change what this one sees.
    monkeypatch.setenv("BLOCKKIT_DEV_DATA", str(tmp_path / "platform"))
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block, consented=True)  # the viewer granted the block its scopes before
    run.wait_outcome("ready")
    _text(run.frame, "#balance", "t !== '?'")
    return run


def _total(run: Any) -> int:
    platform = run.session.platform
    return sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values())


def _owned(run: Any) -> int:
    platform = run.session.platform
    return len(goods.entitlements(platform.store, platform.clock, platform.viewer_id, platform.app_id)["entitlements"])


def _dialog(run: Any, type_: str) -> Any:
    return run.page.wait_for_selector(f".dialog-card[data-type={type_}]")


@pytest.mark.parametrize("type_, button, key, model_type", [
    ("OPEN_RESOURCE_PICKER", "#pick-resource", "resource", "LORA"),
    ("OPEN_CHECKPOINT_PICKER", "#pick-checkpoint", "checkpoint", "Checkpoint")])
def test_a_picker_lists_the_emulated_catalogue_and_returns_the_choice(wired: Any, type_: str, button: str,
                                                                     key: str, model_type: str) -> None:
    # The platform's reply: {selected: {versionId, ...}} (was {ok, checkpoint|resource: {modelVersionId}}).
    run = wired
    run.frame.click(button)
    _dialog(run, type_)
    options = run.page.eval_on_selector_all("#dialog-pick option", "os => os.map(o => [Number(o.value), o.textContent])")
    assert len(options) >= 2, options
    with run.session.platform.store.read() as db:
        rows = {r[0]: (r[1], r[2], r[3]) for r in db.execute(
            "SELECT v.id, m.name, m.type, v.base_model FROM model_versions v JOIN models m ON m.id = v.model_id")}
    for version, label in options:
        name, found_type, base = rows[version]  # every option is a version the emulated catalogue holds
        assert label.startswith(name + " · ") and found_type == model_type
        if key == "checkpoint":  # narrowed to the SDXL family the block asked for
            assert base in {"SDXL 0.9", "SDXL 1.0", "SDXL 1.0 LCM", "SDXL Lightning", "SDXL Hyper", "SDXL Turbo"}
    chosen, _ = options[1]
    run.page.select_option("#dialog-pick", str(chosen))
    run.page.click(".dialog-confirm")
    assert _text(run.frame, "#picked", "t !== 'none'") == f"{key} {chosen} {rows[chosen][0]}"
    assert not run.page.is_visible("#host-dialog .dialog-card")
    # Closed without a pick: a bare {requestId}, which the block reads as a dismissal.
    run.frame.click(button)
    _dialog(run, type_)
    run.page.click(".dialog-cancel")
    assert _text(run.frame, "#picked", "t === 'dismissed'") == "dismissed"


def test_the_upload_dialog_gives_the_block_a_platform_url_not_the_file(wired: Any) -> None:
    # The platform's display upload: {selected: {imageId, nsfwLevel, contentRating, url}} (was a data URL).
    run = wired
    run.frame.click("#upload-image")
    _dialog(run, "OPEN_IMAGE_UPLOAD")
    run.page.set_input_files("#dialog-file", files=[{"name": "dot.png", "mimeType": "image/png", "buffer": DOT_PNG}])
    text = _text(run.frame, "#upload", "t !== 'none'")
    orchestration = run.session.platform.urls.orchestration_url
    assert text.startswith(f"g {orchestration}/__emulator/blobs/"), text
    # The block can show it: the URL serves the viewer's picture from the local platform.
    url = run.frame.evaluate("window.__upload")
    size = run.frame.evaluate("""url => new Promise(r => { const i = new Image(); i.onload = () => r([i.naturalWidth,
        i.naturalHeight]); i.onerror = () => r(null); i.src = url; })""", url)
    assert size == [1, 1]
    run.frame.click("#upload-image")
    _dialog(run, "OPEN_IMAGE_UPLOAD")
    run.page.click(".dialog-cancel")
    assert _text(run.frame, "#upload", "t === 'dismissed'") == "dismissed"


def test_buy_buzz_confirm_adds_to_the_balance_and_cancel_does_not(wired: Any) -> None:
    run = wired
    before = _total(run)
    assert int(run.frame.inner_text("#balance")) == before
    run.frame.click("#buy-buzz")
    dialog = _dialog(run, "OPEN_BUZZ_PURCHASE")
    assert "Balance:" in dialog.text_content() and "blue" in dialog.text_content()
    run.page.click(".dialog-cancel")
    assert _text(run.frame, "#buzz", "t !== 'idle'") == "not bought"
    assert _total(run) == before

    run.frame.click("#buy-buzz")
    _dialog(run, "OPEN_BUZZ_PURCHASE")
    run.page.select_option("#dialog-amount", "5000")
    run.page.click(".dialog-confirm")
    assert _text(run.frame, "#buzz", "t.startsWith('bought')") == "bought 5000"
    assert _text(run.frame, "#balance", f"t === '{before + 5000}'") == str(before + 5000)
    assert _total(run) == before + 5000


def test_the_goods_dialog_shows_title_and_price_and_only_confirm_buys(wired: Any) -> None:
    run = wired
    before, owned = _total(run), _owned(run)
    run.frame.click("#buy")
    dialog = _dialog(run, "PURCHASE_GOOD")
    assert run.page.inner_text(".dialog-good") == "Sticker pack"
    assert run.page.inner_text(".dialog-price") == "40 Buzz"
    assert "Twelve stickers for your board." in dialog.text_content()
    run.page.click(".dialog-cancel")
    assert _text(run.frame, "#purchase", "t !== 'idle'") == "refused: CANCELED"
    assert (_total(run), _owned(run)) == (before, owned)

    run.frame.click("#buy")
    _dialog(run, "PURCHASE_GOOD")
    run.page.click(".dialog-confirm")
    assert _text(run.frame, "#purchase", "t === 'bought'") == "bought"
    assert _total(run) == before - 40 and _owned(run) == owned + 1
    platform = run.session.platform
    items = goods.entitlements(platform.store, platform.clock, platform.viewer_id, platform.app_id)["entitlements"]
    assert "sticker-pack" in {i["goodId"] for i in items}
    # The trace holds both: the cancelled call (no failure) and the purchase.
    calls = [(e["type"], e["ok"], e.get("error")) for e in run.events() if e.get("kind") == "call"]
    assert ("PURCHASE_GOOD", False, "CANCELED") in calls and ("PURCHASE_GOOD", True, None) in calls
