"""The host-side scenarios (``blockkit dev --scenario``), from inside the real cross-origin block frame:
consent-denied answers REQUEST_CONSENT as "Not now", slow holds every reply, token-expires-early mints
short-lived tokens that the host does not refresh (the emulator refuses them once expired)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.browser

SCOPES = ["apps:storage:read", "user:read:self", "buzz:read:self"]


def _block(make_block: Any, name: str) -> Path:
    return make_block(manifest={"blockId": name, "name": f"App {name}", "scopes": SCOPES}, name=name)


def _post(run: Any, message: dict[str, Any]) -> None:
    run.frame.evaluate("m => window.parent.postMessage(m, '*')", message)


def _reply(run: Any, request_id: str, timeout: float = 15_000) -> dict[str, Any]:
    run.frame.wait_for_function(
        f"() => window.__received.some(m => m && m.payload && m.payload.requestId === {request_id!r})", timeout=timeout)
    return run.frame.evaluate(  # type: ignore[no-any-return]
        f"window.__received.find(m => m && m.payload && m.payload.requestId === {request_id!r}).payload")


def test_consent_denied_opens_no_step_sends_nothing_and_keeps_the_scopes_withheld(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "scenario-deny"), scenarios=("consent-denied",))
    run.wait_outcome("ready")
    _post(run, {"type": "REQUEST_CONSENT", "payload": {"scopes": ["user:read:self"]}})
    deadline = time.monotonic() + 10
    while not any(e.get("event") == "consent-declined" for e in run.events()) and time.monotonic() < deadline:
        run.page.wait_for_timeout(100)
    declined = [e for e in run.events() if e.get("event") == "consent-declined"]
    assert declined and declined[0]["missingScopes"] == ["user:read:self", "buzz:read:self"]
    assert not run.page.is_visible("#host-dialog .dialog-card")
    assert run.frame.evaluate("window.__received.filter(m => m && m.type === 'TOKEN_REFRESH').length") == 0
    _post(run, {"type": "GET_VIEWER", "payload": {"requestId": "v"}})
    assert _reply(run, "v") == {"requestId": "v", "error": "block lacks user:read:self scope"}
    assert run.session.platform.granted_scopes() == []


def test_slow_holds_each_reply_for_the_latency_asked(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "scenario-slow"), scenarios=("slow=1200",))
    run.wait_outcome("ready")
    started = run.frame.evaluate("performance.now()")
    _post(run, {"type": "APP_STORAGE_GET", "payload": {"requestId": "s", "key": "k"}})
    _reply(run, "s")
    waited = run.frame.evaluate("performance.now()") - started
    assert waited >= 1200, waited  # never sooner than asked (a floor, not a speed target)
    unanswered = [e for e in run.events() if e.get("kind") == "violation" and e.get("violation") == "unanswered-request"]
    assert unanswered == []  # the host's own wait starts when it sends


def test_token_expires_early_lives_60_s_is_not_refreshed_and_is_refused_after(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "scenario-early"), scenarios=("token-expires-early",))
    run.wait_outcome("ready")
    token = run.frame.evaluate("window.__received.find(m => m && m.type === 'BLOCK_INIT').payload.token")
    platform = run.session.platform
    claims = platform.claims(next(iter(platform.tokens)))
    assert claims is not None and claims["exp"] - claims["iat"] == 60
    assert run.page.evaluate("window.__blockkit.tokenRefreshInMs") is None  # no refresh scheduled
    api = f"{platform.base_url}/api/v1/blocks/app-storage/get"

    def status(raw: str) -> int:
        return httpx.post(api, json={"key": "k"}, headers={"Authorization": f"Bearer {raw}"}, timeout=10).status_code

    assert status(token["raw"]) == 200
    platform.clock.advance(61 + 30)  # past its life and the verifier's leeway, on the emulator clock
    assert status(token["raw"]) == 401
    _post(run, {"type": "REQUEST_TOKEN", "payload": {"requestId": "t"}})
    fresh = _reply(run, "t")["token"]
    assert fresh["raw"] != token["raw"] and status(fresh["raw"]) == 200


def test_the_host_pages_scenarios_menu_switches_the_local_platform(host: Any, make_block: Any) -> None:
    from blockkit.emulator.services import buzz, faults

    run = host(_block(make_block, "scenario-menu"))
    run.wait_outcome("ready")
    platform = run.session.platform
    viewer = platform.viewer_id
    before = buzz.balance(platform.store, platform.clock, viewer)
    run.page.click("#scenarios summary")
    labels = run.page.eval_on_selector_all("#scenario-list input", "bs => bs.map(b => b.dataset.scenario)")
    assert {"insufficient-buzz", "workflow-fails", "storage-write-fails", "consent-denied", "slow",
            "token-expires-early"} == set(labels)
    run.page.check("#scenario-list input[data-scenario=workflow-fails]")
    deadline = time.monotonic() + 10
    while not faults.armed(platform.store) and time.monotonic() < deadline:
        run.page.wait_for_timeout(100)
    assert [f["kind"] for f in faults.armed(platform.store)] == ["workflow-fails"]
    run.page.uncheck("#scenario-list input[data-scenario=workflow-fails]")
    while faults.armed(platform.store) and time.monotonic() < deadline:
        run.page.wait_for_timeout(100)
    assert faults.armed(platform.store) == []
    with run.page.expect_navigation():
        run.page.check("#scenario-list input[data-scenario=insufficient-buzz]")
    run.wait_outcome("ready")
    assert buzz.balance(platform.store, platform.clock, viewer) == {"blue": 0, "green": 0, "yellow": 0}
    run.page.click("#scenarios summary")
    assert run.page.is_checked("#scenario-list input[data-scenario=insufficient-buzz]")
    with run.page.expect_navigation():
        run.page.uncheck("#scenario-list input[data-scenario=insufficient-buzz]")
    run.wait_outcome("ready")
    assert buzz.balance(platform.store, platform.clock, viewer) == before
