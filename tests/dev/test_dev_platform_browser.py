"""``blockkit dev`` wired to the local platform, in headless Chromium: a block that reads the
viewer and the catalogue with its token, buys a good through the host's dialog, upscales a
picture to completion, and keeps app storage across a restart of the dev session."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator.services import consent

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dev" / "wired"


def _text(frame: Any, selector: str, predicate: str, timeout: float = 15_000) -> str:
    frame.wait_for_function(f"() => {{ const t = document.querySelector({selector!r}).textContent; return {predicate}; }}",
                            timeout=timeout)
    return str(frame.eval_on_selector(selector, "e => e.textContent"))


def test_a_block_uses_the_local_platform_end_to_end(host: Callable[..., Any], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A store of its own: a good is owned once, so a purchase by another test would refuse this one.
    monkeypatch.setenv("BLOCKKIT_DEV_DATA", str(tmp_path / "platform"))
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    # The viewer granted the block its scopes before (a first visit is test_dev_consent_browser.py's).
    run = host(block, consented=True)
    run.wait_outcome("ready")
    platform = run.session.platform
    frame = run.frame
    viewer = platform.viewer()
    assert _text(frame, "#viewer", "t !== '?'") == viewer["username"]
    models = _text(frame, "#models", "t !== '?'")
    assert models and not models.startswith("failed"), models

    # A good: the host's consent dialog shows its title and price; confirming buys it.
    balance = platform.state.store and __import__("blockkit.emulator.services.buzz", fromlist=["balance"]).balance(
        platform.store, platform.clock, viewer["id"])
    frame.click("#buy")
    dialog = run.page.wait_for_selector(".dialog-card[data-type=PURCHASE_GOOD]")
    assert "Sticker pack" in dialog.text_content() and "40 Buzz" in dialog.text_content()
    run.page.click(".dialog-confirm")
    assert "sticker-pack" in _text(frame, "#entitlements", "t !== 'none'").split(", ")
    after = __import__("blockkit.emulator.services.buzz", fromlist=["balance"]).balance(platform.store, platform.clock, viewer["id"])
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
    assert _text(again.frame, "#stored", "t !== '?'").startswith('"kept page_apb_dev_')  # the platform's page_<appBlockId>


def test_the_viewer_switcher_signs_out_and_in(host: Callable[..., Any], tmp_path: Path) -> None:
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block, consented=True)
    run.wait_outcome("ready")
    with run.page.expect_navigation():
        run.page.select_option("#viewer-switch", "")
    run.wait_outcome("ready")
    assert _text(run.frame, "#viewer", "t !== '?'") == "signed out"
    moderator = next(u for u in run.session.platform.users if u.is_moderator)
    platform = run.session.platform  # the moderator, too, granted the block its scopes before
    consent.grant(platform.store, platform.clock, moderator.id, platform.app_block_id,
                  consent.gated(platform.manifest.scopes), ceiling=platform.manifest.scopes)
    with run.page.expect_navigation():
        run.page.select_option("#viewer-switch", str(moderator.id))
    run.wait_outcome("ready")
    assert _text(run.frame, "#viewer", "t !== '?'") == moderator.username


def test_replies_reach_the_trace_in_order_after_their_requests(host: Callable[..., Any], tmp_path: Path) -> None:
    # The host page reports what it posted to the block together with the block's next message:
    # the trace must still read request, call, reply, in that order, for every request.
    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block)
    run.wait_outcome("ready")
    _text(run.frame, "#balance", "t !== '?'")
    for _ in range(3):
        run.frame.click("#pick-resource")
        run.page.wait_for_selector(".dialog-card[data-type=OPEN_RESOURCE_PICKER]")
        run.page.click(".dialog-cancel")
        run.page.wait_for_selector("#host-dialog .dialog-card", state="detached")
    events = run.events()
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    requests = {e["data"]["payload"]["requestId"]: e for e in events if e.get("kind") == "message"
                and e.get("dir") == "in" and isinstance((e.get("data") or {}).get("payload"), dict)
                and "requestId" in e["data"]["payload"]}
    replies = [e for e in events if e.get("kind") == "message" and e.get("dir") == "out"
               and isinstance((e.get("data") or {}).get("payload"), dict) and "requestId" in e["data"]["payload"]]
    assert len(replies) >= 6 and {r["data"]["payload"]["requestId"] for r in replies} == set(requests)
    for reply in replies:
        request = requests[reply["data"]["payload"]["requestId"]]
        assert request["seq"] < reply["seq"] and request["t"] <= reply["t"]
    # In the order they happened on the page: a reply reported late would come after a later request.
    times = [e["t"] for e in events if e.get("kind") == "message"]
    assert times == sorted(times)


def test_the_top_bar_console_link_opens_the_local_platforms_console_signed_in(host: Callable[..., Any],
                                                                             tmp_path: Path) -> None:
    """The host page's "Console" opens the local platform's console in a new tab, signed in with the
    run's access key, which is never in the host page: the link's href has no key, and the sign-in
    link comes from POST /api/console, which asks for the dev key and the host page's own origin."""
    import httpx

    from blockkit.emulator.http.access import access_cookie

    block = tmp_path / "wired"
    shutil.copytree(FIXTURE, block)
    run = host(block, consented=True)
    run.wait_outcome("ready")
    platform = run.session.platform
    console_url = platform.base_url + "/__emulator/"
    link = run.page.locator("#console-link")
    assert link.is_visible() and link.inner_text() == "Console"
    assert link.get_attribute("href") == console_url
    assert platform.access_key not in run.page.content()

    with run.page.context.expect_page() as opened:
        link.click()
    console = opened.value
    console.wait_for_selector("#base-url")
    assert console.url == console_url  # the key left the address bar
    assert console.inner_text("#base-url") == platform.base_url  # the overview: signed in, not the key page
    port = httpx.URL(platform.base_url).port
    assert port is not None
    cookies = {c["name"]: c["value"] for c in console.context.cookies(platform.base_url)}
    assert cookies[f"bk_access_{port}"] == access_cookie(platform.access_key, port)[1]
    assert platform.access_key not in run.page.content()  # the host page still holds no key
    console.close()

    # The route answers only the host page: with the dev key, from its own origin.
    route = run.session.host_url + "api/console"
    answer = httpx.post(route, json={}, headers=run.session.api_headers())
    assert answer.status_code == 200 and answer.json() == {"url": f"{console_url}?key={platform.access_key}"}
    assert httpx.post(route, json={}, headers={"origin": run.session.host_url.rstrip("/")}).status_code == 401
    other = {**run.session.api_headers(), "origin": "http://127.0.0.1:9", "sec-fetch-site": "same-site"}
    assert httpx.post(route, json={}, headers=other).status_code == 403
