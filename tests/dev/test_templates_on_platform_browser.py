"""Each template `blockkit new` writes, run by ``blockkit dev`` on the local platform in headless
Chromium: the block shows the viewer (or "Signed out") and models read with its token, buys a
good after the viewer confirms in the block, upscales a picture to completion, and keeps app
storage across a restart. The replies are the platform's shapes (docs/platform-shapes.md).

One scaffold (and, for vite and react, one real ``npm ci`` and build) per template, shared by
its flows; the local platform's store is shared by the whole module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.session import DevOptions, DevSession

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TEMPLATES = ("static", "vite", "react")
SCOPES = "ai:write:budgeted,apps:storage:read,apps:storage:write"
JUSTIFY = "ai:write:budgeted=Upscales the viewer's picture."
BUDGET = "20"
GOOD = {"id": "supporter-pack", "title": "Supporter pack", "priceBuzz": 100}  # what --goods writes
DIALOG_GOOD = {"id": "sticker-sheet", "title": "Sticker sheet", "priceBuzz": 25,
               "description": "Twelve stickers.", "payload": {"stickers": 12}}
INPUT_SIZE = 64  # the picture the block upscales, square
VIEWPORT = {"width": 1400, "height": 860}
WAIT_MS = 20_000


def _run(command: list[str], cwd: Path | None = None, timeout: float = 300) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def platform_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("templates-platform")


@pytest.fixture(scope="module", params=TEMPLATES)
def scaffold(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    template = str(request.param)
    if template != "static" and shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    block = tmp_path_factory.mktemp(f"template-{template}") / f"{template}-flows"
    _run([sys.executable, "-m", "blockkit.cli", "new", str(block), "--template", template, "--defaults", "--goods",
          "--scope", SCOPES, "--justify", JUSTIFY, "--buzz-budget", BUDGET])
    manifest = json.loads((block / "block.manifest.json").read_text())
    assert {k: manifest["goods"][0][k] for k in GOOD} == GOOD
    # The developer adds a second good, sold through blockkit dev's PURCHASE_GOOD and the host's dialog.
    manifest["goods"].append(DIALOG_GOOD)
    (block / "block.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if template != "static":
        # As the other npm tests do: from the shipped lockfile, the local npm cache first.
        _run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"], cwd=block, timeout=600)
        _run(["npm", "run", "build"], cwd=block)  # tsc --noEmit, then vite build into dist/
    return block


class Running:
    """``blockkit dev`` on one scaffold with its host page open; restartable on the same store."""

    def __init__(self, block: Path, platform_dir: Path, browser: Any, *, anonymous: bool = False) -> None:
        self.block = block
        self.anonymous = anonymous
        self.platform_dir = platform_dir
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.session: DevSession | None = None
        self.start()

    def start(self) -> None:
        session = DevSession(DevOptions(block_dir=self.block, platform_dir=self.platform_dir, anonymous=self.anonymous,
                                        trace_path=self.block.parent / "trace.jsonl"))
        session.start()
        self.session = session
        platform = session.platform
        assert platform is not None
        # The viewer granted the block its scopes before (the first visit is test_dev_consent_browser.py's).
        platform.grant_declared()
        self.page.goto(session.page_url)
        self.page.wait_for_function("() => window.__blockkit && window.__blockkit.outcome !== 'pending'",
                                    timeout=WAIT_MS, polling=50)
        assert self.page.evaluate("() => window.__blockkit.outcome") == "ready"
        # The bridge puts itself on window.blockkit when BLOCK_INIT carries apiBaseUrl (blockkit dev).
        self.frame.wait_for_function("() => !!window.blockkit", timeout=WAIT_MS)

    def reload(self) -> None:
        """Load the host page again (a new page load of the block), on the same run."""
        self.page.reload()
        self.page.wait_for_function("() => window.__blockkit && window.__blockkit.outcome !== 'pending'",
                                    timeout=WAIT_MS, polling=50)
        assert self.page.evaluate("() => window.__blockkit.outcome") == "ready"
        self.frame.wait_for_function("() => !!window.blockkit", timeout=WAIT_MS)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()
            self.session = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def platform(self) -> Any:
        assert self.session is not None and self.session.platform is not None
        return self.session.platform

    @property
    def frame(self) -> Any:
        frame = self.page.wait_for_selector("#block-frame", state="attached").content_frame()
        assert frame is not None
        return frame

    def text(self, selector: str, predicate: str = "t") -> str:
        self.frame.wait_for_function(
            f"() => {{ const e = document.querySelector({selector!r}); const t = e && e.textContent; return {predicate}; }}",
            timeout=WAIT_MS)
        return str(self.frame.eval_on_selector(selector, "e => e.textContent"))

    def calls(self) -> list[dict[str, Any]]:
        """The calls the host brokered so far, from the trace."""
        assert self.session is not None
        self.page.evaluate("() => window.__blockkit.flush()")
        return [e for e in self.session.events() if e.get("kind") == "call"]

    def close(self) -> None:
        self.stop()
        self.context.close()


@pytest.fixture(scope="module")
def running(scaffold: Path, platform_dir: Path, browser: Any) -> Iterator[Running]:
    run = Running(scaffold, platform_dir, browser)
    yield run
    run.close()


def _models_for(run: Running) -> list[str]:
    """The first models of the catalogue read from Python with the block instance's token."""
    (token,) = run.platform.tokens.values()
    request = urllib.request.Request(f"{run.platform.base_url}/api/v1/blocks/models?limit=3",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        names = [item["name"] for item in json.load(response)["items"]]
    with run.platform.store.read() as db:
        seeded = {row[0] for row in db.execute("SELECT name FROM models")}
    assert names and set(names) <= seeded, (names, "are not the emulator's seeded models")
    return names


def test_the_scaffold_declares_what_its_code_uses(scaffold: Path) -> None:
    # GET_VIEWER needs user:read:self on the platform; the flags above did not ask for it.
    assert "user:read:self" not in SCOPES
    assert "user:read:self" in json.loads((scaffold / "block.manifest.json").read_text())["scopes"]


def test_the_block_shows_the_viewer_and_models_read_with_its_token(running: Running) -> None:
    viewer = running.platform.viewer()
    assert viewer is not None
    assert running.text("#viewer", "t && t !== 'Loading…'") == viewer["username"]
    running.frame.wait_for_selector("#models li", timeout=WAIT_MS)
    shown = running.frame.eval_on_selector_all("#models li", "items => items.map(i => i.textContent)")
    assert shown == _models_for(running)
    # The viewer came through the bridge (GET_VIEWER), not from BLOCK_INIT's deprecated copy.
    assert "GET_VIEWER" in [c["type"] for c in running.calls() if c["ok"]]


def test_the_block_buys_a_good_once_the_viewer_confirms(running: Running) -> None:
    from blockkit.emulator.services import buzz

    platform = running.platform
    before = sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values())
    # Not owned yet: the entitlements read on load leaves Buy as it is.
    assert _buy_button(running, GOOD["id"], "Buy") == {"text": "Buy", "disabled": False}
    running.frame.click(f"button[data-good={GOOD['id']}]")  # the scaffold's Buy asks first
    asked = running.text("#shop-status", "t && t.startsWith('Confirm')")
    assert GOOD["title"] in asked and f"{GOOD['priceBuzz']} Buzz" in asked
    assert sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values()) == before
    running.frame.click(f"button[data-confirm={GOOD['id']}]")  # bridge.purchaseGood: the platform's route
    assert running.text("#shop-status", "t && t.startsWith('Bought')") == f"Bought {GOOD['title']}."
    after = sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values())
    assert after == before - GOOD["priceBuzz"]
    # The route, not blockkit dev's PURCHASE_GOOD message (the platform's host has none).
    assert "PURCHASE_GOOD" not in {c["type"] for c in running.calls()}
    # The entitlement, read from the frame with the block's token, in the platform's shape.
    owned = running.frame.evaluate("() => blockkit.getEntitlements()")
    assert [e["goodId"] for e in owned["entitlements"]] == [GOOD["id"]], owned
    assert set(owned["entitlements"][0]) == {"goodId", "kind", "payload", "grantedAt"}
    # The bought good's Buy is gone: it reads Owned, and cannot be clicked.
    assert _buy_button(running, GOOD["id"], "Owned") == {"text": "Owned", "disabled": True}
    # A second purchase of the same good is refused by the platform (one ownership per good): 409 already_owned.
    refused = running.frame.evaluate("""(goodId) => blockkit.purchaseGood(goodId).then(
        () => 'bought', (e) => e.code)""", GOOD["id"])
    assert refused == "already_owned"
    assert sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values()) == after


def _buy_button(run: Running, good_id: str, text: str) -> dict[str, Any]:
    """The shop's button for a good, once it reads ``text``: {text, disabled}."""
    selector = f"button[data-good={good_id}]"
    run.text(selector, f"t === {text!r}")
    return dict(run.frame.eval_on_selector(selector, "b => ({text: b.textContent.trim(), disabled: b.disabled})"))


def test_a_good_the_viewer_owns_shows_owned_when_the_block_loads(running: Running) -> None:
    from blockkit.emulator.services import goods
    from blockkit.emulator.services.errors import ServiceError

    platform = running.platform
    caller = goods.GoodsCaller(platform.viewer_id, platform.app_id, platform.manifest.block_id)
    try:  # owned before the page loads (bought elsewhere, or by the test above)
        goods.purchase_good(platform.store, platform.clock, caller, list(platform.manifest.goods), GOOD["id"])
    except ServiceError as exc:
        assert exc.code == "already_owned", exc
    running.reload()
    # Read from the platform on load (GET /api/v1/blocks/entitlements): Owned, not Buy.
    assert _buy_button(running, GOOD["id"], "Owned") == {"text": "Owned", "disabled": True}
    entitlements = [c for c in running.calls() if c.get("via") == "http" and c["type"].endswith("/entitlements")]
    assert entitlements and entitlements[-1]["ok"], entitlements


def test_a_good_bought_over_the_bridge_asks_in_the_hosts_dialog(running: Running) -> None:
    from blockkit.emulator.services import buzz

    platform = running.platform
    before = sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values())
    # The scaffold's own bridge helper sends PURCHASE_GOOD; the host page asks the viewer.
    running.frame.evaluate("""(goodId) => {
        window.bought = blockkit.request('PURCHASE_GOOD', { goodId }).then((r) => r, (e) => ({ failed: e.code }));
    }""", DIALOG_GOOD["id"])
    dialog = running.page.wait_for_selector(".dialog-card[data-type=PURCHASE_GOOD]", timeout=WAIT_MS)
    assert running.page.inner_text(".dialog-good") == DIALOG_GOOD["title"]
    assert running.page.inner_text(".dialog-price") == f"{DIALOG_GOOD['priceBuzz']} Buzz"
    assert DIALOG_GOOD["description"] in dialog.text_content()
    assert sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values()) == before
    running.page.click(".dialog-confirm")
    reply = running.frame.evaluate("() => window.bought")
    assert reply["ok"] is True and reply["purchase"]["goodId"] == DIALOG_GOOD["id"], reply
    assert reply["purchase"]["priceBuzz"] == DIALOG_GOOD["priceBuzz"]
    assert reply["entitlement"]["payload"] == DIALOG_GOOD["payload"]
    after = sum(buzz.balance(platform.store, platform.clock, platform.viewer_id).values())
    assert after == before - DIALOG_GOOD["priceBuzz"]
    owned = running.frame.evaluate("() => blockkit.getEntitlements()")
    assert DIALOG_GOOD["id"] in {e["goodId"] for e in owned["entitlements"]}, owned
    assert ("PURCHASE_GOOD", True) in {(c["type"], c["ok"]) for c in running.calls()}


def test_the_block_upscales_a_picture_to_completion(running: Running) -> None:
    submitted = running.frame.evaluate("""async (size) => {
        const canvas = document.createElement('canvas');
        canvas.width = canvas.height = size;
        const g = canvas.getContext('2d');
        g.fillStyle = '#36c'; g.fillRect(0, 0, size, size); g.fillStyle = '#fc3'; g.fillRect(8, 8, size / 2, size / 2);
        const snapshot = await blockkit.submitWorkflow({ steps: [{ $type: 'imageUpscaler',
            input: { image: canvas.toDataURL('image/png'), numberOfRepeats: 1 } }] });
        return { id: snapshot.workflowId, status: snapshot.status, cost: snapshot.cost };
    }""", INPUT_SIZE)
    assert submitted["status"] == "pending" and submitted["cost"]["total"] >= 1, submitted
    # The block polls; while the emulator's clock stands still the workflow stays unfinished.
    running.frame.evaluate("""(id) => {
        window.statuses = [];
        window.upscaled = blockkit.waitForWorkflow(id, { intervalMs: 100, onStatus: (w) => statuses.push(w.status) });
    }""", submitted["id"])
    running.frame.wait_for_function("() => statuses.length >= 2", timeout=WAIT_MS)
    running.platform.clock.advance(30)  # 2 s queued, then 3 s an upscale
    result = running.frame.evaluate("""async () => {
        const done = await upscaled;
        const img = document.createElement('img');
        img.id = 'upscaled';
        img.src = done.imageUrls[0];
        document.getElementById('root').append(img);
        await img.decode();
        return { status: done.status, statuses, urls: done.imageUrls.length, width: img.naturalWidth,
                 height: img.naturalHeight };
    }""")
    assert result["statuses"][0] in ("pending", "processing") and result["urls"] == 1 and result["statuses"][-1] == "succeeded", result
    assert result["status"] == "succeeded", result
    assert (result["width"], result["height"]) == (2 * INPUT_SIZE, 2 * INPUT_SIZE)
    assert {"SUBMIT_WORKFLOW", "POLL_WORKFLOW"} <= {c["type"] for c in running.calls()}


def test_storage_survives_a_restart_of_blockkit_dev(running: Running) -> None:
    first_instance = next(iter(running.platform.tokens))
    value = {"note": f"kept from {first_instance}"}
    saved = running.frame.evaluate("(value) => blockkit.storageSet('note', value)", value)
    assert saved["ok"] is True, saved
    running.restart()  # stop blockkit dev, start it again on the same store
    # A new page load, the same instance: the platform's page_<appBlockId>, as an install's id is stable.
    assert next(iter(running.platform.tokens)) == first_instance
    assert first_instance.startswith("page_")
    assert running.frame.evaluate("() => blockkit.storageGet('note')") == value


def test_a_signed_out_viewer_sees_signed_out_and_the_models(scaffold: Path, tmp_path: Path, browser: Any) -> None:
    # A store of its own: the module's signed-in session still holds the shared one, and one data
    # directory serves one emulator at a time (its lock).
    run = Running(scaffold, tmp_path / "platform", browser, anonymous=True)
    try:
        assert run.platform.viewer() is None
        # The host answers GET_VIEWER with an error; the block shows it as signed out, not as a failure.
        assert run.text("#viewer", "t && t !== 'Loading…'") == "Signed out"
        run.frame.wait_for_selector("#models li", timeout=WAIT_MS)
        assert run.frame.eval_on_selector_all("#models li", "items => items.map(i => i.textContent)") == _models_for(run)
        assert "GET_VIEWER" in [c["type"] for c in run.calls() if not c["ok"]]
    finally:
        run.close()


def test_the_scaffolds_bridge_reads_picks_dismissals_and_sentence_refusals(running: Running) -> None:
    # The scaffold's own bridge.js against blockkit dev's host: a pick resolves the platform's `selected`,
    # a dismissal resolves null (it used to reject with CANCELED), a refusal is the platform's sentence.
    running.frame.evaluate("() => { window.picked = blockkit.pickCheckpoint({ baseModelGroup: 'SDXL' }); }")
    running.page.wait_for_selector(".dialog-card[data-type=OPEN_CHECKPOINT_PICKER]", timeout=WAIT_MS)
    running.page.click(".dialog-confirm")
    picked = running.frame.evaluate("() => window.picked")
    assert set(picked) == {"versionId", "modelId", "modelName", "versionName", "baseModel"}, picked
    running.frame.evaluate("() => { window.dismissedPick = blockkit.pickCheckpoint({ baseModelGroup: 'SDXL' }); }")
    running.page.wait_for_selector(".dialog-card[data-type=OPEN_CHECKPOINT_PICKER]", timeout=WAIT_MS)
    running.page.click(".dialog-cancel")
    assert running.frame.evaluate("() => window.dismissedPick") is None
    refused = running.frame.evaluate("""() => blockkit.setUserCheckpoint(11)
        .then(() => "resolved", (e) => ({ code: e.code, message: e.message }))""")
    assert refused == {"code": "REFUSED", "message": "SET_USER_CHECKPOINT refused: page blocks cannot persist a "
                                                        "checkpoint override (no model binding)"}
    saved = running.frame.evaluate("""() => blockkit.saveImage({ url: 'data:image/png;base64,AA==' })
        .then(() => 'saved', (e) => e.message)""")
    assert saved == "SAVE_IMAGE refused: image url is not allowed"
