"""The replies a block gets to pickers, uploads, saves, wildcard packs, checkpoints and publishing, on the
page and on a model slot, asked from inside the block's own cross-origin (opaque) frame in Chromium.

Each reply is the platform's shape (civitai/civitai at ebed661: PageBlockHost.tsx, IframeHost.tsx,
saveImageDownload.ts, pageBlockHostLogic.ts, hostHandlerParity.ts); docs/platform-shapes.md lists them.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.timings import PLATFORM_TIMINGS

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dev" / "replies"
DOT_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2a4e8d10000000049454e44ae426082"
)
CHECKPOINT_KEYS = {"versionId", "modelId", "modelName", "versionName", "baseModel"}
TIMINGS = PLATFORM_TIMINGS.scaled(0.5)


def _start(host: Any, tmp_path: Path, surface: str = "page") -> Any:
    block = tmp_path / f"replies-{surface.replace('.', '-')}"
    shutil.copytree(FIXTURE, block)
    run = host(block, surface=surface, timings=TIMINGS)
    run.wait_outcome("ready")
    frame = run.frame
    assert frame.evaluate("self.origin") == "null"  # a real opaque, cross-origin frame
    return run


def _ask(run: Any, type_: str, payload: dict[str, Any] | None = None) -> None:
    """Post the request from the block's frame; its answer lands in window.__answer."""
    run.frame.evaluate("([t, p]) => { window.__answer = undefined; ask(t, p).then(a => { window.__answer = a; }); }",
                       [type_, payload or {}])


def _answer(run: Any, timeout: float = 15_000) -> dict[str, Any]:
    run.frame.wait_for_function("() => window.__answer !== undefined", timeout=timeout)
    answer = run.frame.evaluate("window.__answer")
    assert isinstance(answer, dict)
    return answer


def _dialog(run: Any, type_: str) -> Any:
    return run.page.wait_for_selector(f".dialog-card[data-type={type_}]")


@pytest.fixture
def page_run(host: Any, tmp_path: Path) -> Any:
    return _start(host, tmp_path)


def test_page_checkpoint_picker_pick_and_dismiss(page_run: Any) -> None:
    run = page_run
    _ask(run, "OPEN_CHECKPOINT_PICKER", {"baseModelGroup": "SDXL"})
    _dialog(run, "OPEN_CHECKPOINT_PICKER")
    chosen = int(run.page.eval_on_selector("#dialog-pick", "s => s.value"))
    run.page.click(".dialog-confirm")
    answer = _answer(run)
    assert set(answer) == {"requestId", "selected"} and set(answer["selected"]) == CHECKPOINT_KEYS
    assert answer["selected"]["versionId"] == chosen
    _ask(run, "OPEN_CHECKPOINT_PICKER", {"baseModelGroup": "SDXL"})
    _dialog(run, "OPEN_CHECKPOINT_PICKER")
    run.page.click(".dialog-cancel")
    assert set(_answer(run)) == {"requestId"}
    # No family: the platform's picker lists nothing.
    _ask(run, "OPEN_CHECKPOINT_PICKER")
    _dialog(run, "OPEN_CHECKPOINT_PICKER")
    assert run.page.eval_on_selector_all("#dialog-pick option", "os => os.length") == 0
    assert run.page.locator(".dialog-confirm").count() == 0
    run.page.click(".dialog-cancel")
    assert set(_answer(run)) == {"requestId"}


def test_page_resource_picker_takes_loras_and_drops_other_types(page_run: Any) -> None:
    run = page_run
    _ask(run, "OPEN_RESOURCE_PICKER", {"resourceType": "Embedding"})
    run.page.wait_for_timeout(TIMINGS.request_reply_timeout_ms + 500)
    assert run.page.locator(".dialog-card").count() == 0  # no dialog opened
    assert run.frame.evaluate("window.__answer") is None or run.frame.evaluate("window.__answer === undefined")
    events = run.events()
    dropped = [e for e in events if e.get("event") == "dropped" and e.get("type") == "OPEN_RESOURCE_PICKER"]
    assert dropped and "resourceType must be one of Checkpoint, LORA" in dropped[0]["reason"]
    unanswered = [v for v in trace.violations(events) if v.get("type") == "OPEN_RESOURCE_PICKER"]
    assert unanswered and "resourceType must be one of" in unanswered[0]["explanation"]
    _ask(run, "OPEN_RESOURCE_PICKER", {"resourceType": "lora"})
    _dialog(run, "OPEN_RESOURCE_PICKER")
    run.page.click(".dialog-confirm")
    selected = _answer(run)["selected"]
    assert selected["modelType"] == "LORA" and {"strength", "minStrength", "maxStrength", "trainedWords",
                                                "clipSkip"} <= set(selected)


def _upload(run: Any, payload: dict[str, Any]) -> dict[str, Any]:
    _ask(run, "OPEN_IMAGE_UPLOAD", payload)
    _dialog(run, "OPEN_IMAGE_UPLOAD")
    run.page.set_input_files("#dialog-file", files=[{"name": "dot.png", "mimeType": "image/png", "buffer": DOT_PNG}])
    return _answer(run)


def test_page_uploads_display_source_and_async_scan(page_run: Any) -> None:
    run = page_run
    orchestration = run.session.platform.urls.orchestration_url
    display = _upload(run, {})["selected"]
    assert set(display) == {"imageId", "nsfwLevel", "contentRating", "url"}
    assert display["url"].startswith(orchestration + "/__emulator/blobs/") and display["contentRating"] == "g"
    source = _upload(run, {"purpose": "generationSource"})["selected"]
    assert source == {"url": source["url"], "width": 1, "height": 1}
    pending = _upload(run, {"asyncScan": True})["selected"]
    assert pending["status"] == "pending" and set(pending) == {"status", "imageId", "url"}
    run.frame.wait_for_function("() => (window.pushes || []).length === 1", timeout=10_000)
    push = run.frame.evaluate("window.pushes[0]")
    assert push["type"] == "IMAGE_SCAN_RESOLVED"
    assert push["payload"]["imageId"] == pending["imageId"] and push["payload"]["result"]["status"] == "scanned"
    assert push["payload"]["result"]["image"]["url"] == pending["url"]
    _ask(run, "OPEN_IMAGE_UPLOAD", {"asyncScan": True})
    _dialog(run, "OPEN_IMAGE_UPLOAD")
    run.page.click(".dialog-cancel")
    assert set(_answer(run)) == {"requestId"}
    run.page.wait_for_timeout(300)
    assert run.frame.evaluate("window.pushes.length") == 1  # no verdict for a dismissed upload


def test_page_save_image_downloads_in_the_host_and_refuses_data_urls(page_run: Any, tmp_path: Path) -> None:
    run = page_run
    uploaded = _upload(run, {})["selected"]
    with run.page.expect_download() as download:
        _ask(run, "SAVE_IMAGE", {"url": uploaded["url"], "filename": "../../picture.png"})
        answer = _answer(run)
    assert answer == {"requestId": answer["requestId"], "ok": True}
    assert download.value.suggested_filename == "picture.png"
    saved = tmp_path / "saved.png"
    download.value.save_as(saved)
    assert saved.read_bytes().startswith(b"\x89PNG")
    with run.page.expect_download():
        _ask(run, "SAVE_IMAGE", {"imageId": uploaded["imageId"]})
        assert _answer(run)["ok"] is True
    data_url = "data:image/png;base64," + base64.b64encode(DOT_PNG).decode()
    for url in (data_url, "http://image.civitai.com/a.png", "blob:null/1"):
        _ask(run, "SAVE_IMAGE", {"url": url})
        refused = _answer(run)
        assert (refused["ok"], refused["error"]) == (False, "image url is not allowed")
    # The block never learns where a file went on the developer's machine.
    replies = trace.messages(run.events(), "out", "SAVE_IMAGE_RESULT")
    assert replies and all(set(r["data"]["payload"]) <= {"requestId", "ok", "error"} for r in replies)


def test_page_wildcard_pack_checkpoint_refusal_and_publish_cancel(page_run: Any) -> None:
    run = page_run
    with run.session.platform.store.read() as db:
        version = db.execute("SELECT v.id FROM model_versions v JOIN models m ON m.id = v.model_id"
                             " JOIN model_files f ON f.version_id = v.id AND f.visibility = 'Public'"
                             " WHERE m.type = 'Wildcards' AND m.status = 'Published' AND v.status = 'Published'"
                             " AND v.nsfw_level = 1 LIMIT 1").fetchone()[0]
    _ask(run, "GET_WILDCARD_PACK", {"modelVersionId": version})
    pack = _answer(run)["pack"]
    assert pack["modelVersionId"] == version and pack["lists"] and pack["truncated"] is False
    _ask(run, "GET_WILDCARD_PACK", {"modelVersionId": 10**9})
    assert _answer(run)["error"] == "not-found"
    _ask(run, "SET_USER_CHECKPOINT", {"versionId": 11})
    assert _answer(run) == {"requestId": "q3", "ok": False,
                            "error": "page blocks cannot persist a checkpoint override (no model binding)"}
    _ask(run, "PUBLISH_GENERATION_OUTPUTS", {"workflowId": "wf-1", "imageIndexes": [0, 1]})
    dialog = _dialog(run, "PUBLISH_GENERATION_OUTPUTS")
    assert "Publish 2 results to" in dialog.text_content()
    run.page.click(".dialog-cancel")
    assert _answer(run) == {"requestId": "q4", "error": "publish canceled"}


def test_slot_checkpoint_and_what_the_slot_leaves_unanswered(host: Any, tmp_path: Path) -> None:
    run = _start(host, tmp_path, surface="model.sidebar_top")
    _ask(run, "SET_USER_CHECKPOINT", {"versionId": 11})
    assert _answer(run) == {"requestId": "q1", "ok": True}
    _ask(run, "SET_USER_CHECKPOINT", {"versionId": "11"})
    assert _answer(run) == {"requestId": "q2", "ok": False, "error": "versionId must be a number or null"}
    _ask(run, "OPEN_CHECKPOINT_PICKER", {"baseModelGroup": "SDXL 1.0"})
    _dialog(run, "OPEN_CHECKPOINT_PICKER")
    run.page.click(".dialog-confirm")
    assert set(_answer(run)["selected"]) == CHECKPOINT_KEYS
    unbridged = {"OPEN_RESOURCE_PICKER": {"resourceType": "LORA"}, "OPEN_IMAGE_UPLOAD": {},
                 "SAVE_IMAGE": {"url": "https://image.civitai.com/a.png"}, "GET_WILDCARD_PACK": {"modelVersionId": 1},
                 "PUBLISH_GENERATION_OUTPUTS": {"workflowId": "w"}, "GET_IMAGES_BY_IDS": {"imageIds": [1]}}
    for type_, payload in unbridged.items():
        run.frame.evaluate("([t, p]) => { ask(t, p); }", [type_, payload])
    run.page.wait_for_timeout(TIMINGS.request_reply_timeout_ms + 800)
    assert run.page.locator(".dialog-card").count() == 0
    events = run.events()
    answered = {m["type"] for m in trace.messages(events, "out")}
    assert not answered & {"RESOURCE_PICKER_RESULT", "IMAGE_UPLOAD_RESULT", "SAVE_IMAGE_RESULT",
                           "WILDCARD_PACK_RESULT", "PUBLISH_RESULT", "IMAGES_RESULT"}
    why = {v["type"]: v["explanation"] for v in trace.violations(events) if v["violation"] == "unanswered-request"}
    for type_ in unbridged:
        assert "is not bridged on model slots" in why[type_], (type_, why.get(type_))
