"""The ``generation`` template (``blockkit new --template generation``): the platform's money path
(pick a checkpoint, estimate, ask consent, submit, poll, show the images), run in ``blockkit dev``
from inside the real cross-origin frame, with consent allowed, with consent denied and under
insufficient Buzz; and ``dev --check`` passes under every scenario."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev.scenarios import SCENARIOS

pytestmark = pytest.mark.browser
WAIT_MS = 40_000


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    block = tmp_path_factory.mktemp("generation") / "gen-block"
    done = subprocess.run([sys.executable, "-m", "blockkit.cli", "new", str(block), "--template", "generation",
                           "--defaults"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return block


def _status(run: Any, predicate: str) -> str:
    run.frame.wait_for_function(
        f"() => {{ const e = document.querySelector('#status'); const t = e && e.textContent; return {predicate}; }}",
        timeout=WAIT_MS)
    return str(run.frame.eval_on_selector("#status", "e => e.textContent"))


def _pick(run: Any) -> None:
    run.frame.click("#pick")
    run.page.wait_for_selector(".dialog-card[data-type=OPEN_CHECKPOINT_PICKER]")
    run.page.wait_for_selector("#dialog-pick option", state="attached", timeout=WAIT_MS)
    first = run.page.eval_on_selector("#dialog-pick option", "o => o.value")
    run.page.select_option("#dialog-pick", first)
    run.page.click(".dialog-confirm")
    _status(run, "t && t.startsWith('Checkpoint:')")


def test_the_template_declares_what_its_money_path_uses(scaffold: Path) -> None:
    manifest = json.loads((scaffold / "block.manifest.json").read_text())
    assert {"ai:write:budgeted", "buzz:read:self"} <= set(manifest["scopes"])
    assert set(manifest["scopeJustifications"]) == {"ai:write:budgeted", "buzz:read:self"}
    assert manifest["page"]["buzzBudgetPerGen"] >= 1
    lint = subprocess.run([sys.executable, "-m", "blockkit.cli", "lint", str(scaffold)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_allow_then_generate_shows_the_images(host: Any, scaffold: Path) -> None:
    run = host(scaffold)
    run.wait_outcome("ready")
    run.frame.click("#generate")
    assert _status(run, "t && t.startsWith('Pick')") == "Pick a checkpoint first."
    _pick(run)
    run.frame.click("#generate")
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]", timeout=WAIT_MS)
    run.page.click(".consent-allow")
    text = _status(run, "t && (t.startsWith('Done') || t.startsWith('Could not') || t.includes('ended'))")
    assert text.startswith("Done: 1 image"), text
    assert run.frame.eval_on_selector_all("#images img", "imgs => imgs.length") == 1
    submitted = [e for e in run.events() if e.get("kind") == "call" and e.get("type") == "SUBMIT_WORKFLOW"]
    assert submitted and submitted[0]["ok"]


def test_consent_denied_says_it_needs_permission_and_spends_nothing(host: Any, scaffold: Path) -> None:
    run = host(scaffold, scenarios=("consent-denied",))
    run.wait_outcome("ready")
    platform = run.session.platform
    granted_before = platform.granted_scopes()  # an earlier Allow is kept in the store, unused for the run
    run.frame.wait_for_function("() => !!(window.blockkit && window.blockkit.getState().token)", timeout=WAIT_MS)
    token = run.frame.evaluate("window.blockkit.getState().token")
    assert "ai:write:budgeted" not in token["scopes"]
    _pick(run)
    run.frame.click("#generate")
    text = _status(run, "t && t.startsWith('Asking')")
    assert "permission" in text
    run.page.wait_for_timeout(2000)
    assert not run.page.is_visible("#host-dialog .dialog-card")
    calls = {e.get("type") for e in run.events() if e.get("kind") == "call"}
    assert not calls & {"ESTIMATE_WORKFLOW", "SUBMIT_WORKFLOW"}
    assert platform.granted_scopes() == granted_before


def test_insufficient_buzz_says_what_it_costs_and_submits_nothing(host: Any, scaffold: Path) -> None:
    run = host(scaffold, scenarios=("insufficient-buzz",), consented=True)
    run.wait_outcome("ready")
    _pick(run)
    run.frame.click("#generate")
    text = _status(run, "t && (t.includes('buy Buzz') || t.startsWith('Could not') || t.startsWith('Done'))")
    assert "you hold 0" in text and "buy Buzz" in text, text
    calls = {e.get("type") for e in run.events() if e.get("kind") == "call"}
    assert "SUBMIT_WORKFLOW" not in calls


@pytest.mark.parametrize("scenario", [None, *sorted(SCENARIOS)])
def test_dev_check_passes_under_every_scenario(scaffold: Path, tmp_path: Path, scenario: str | None) -> None:
    command = [sys.executable, "-m", "blockkit.cli", "dev", str(scaffold), "--check", "--trace",
               str(tmp_path / "trace.jsonl")]
    if scenario is not None:
        command += ["--scenario", scenario]
    env = {**os.environ, "BLOCKKIT_DEV_DATA": str(tmp_path / "platform")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok: handshake completed"), done.stdout


def test_a_scaffolds_purchase_asks_consent_on_a_first_visit(host: Any, tmp_path: Path) -> None:
    # goods:purchase:self is consent-gated: the template asks for it (bridge.ensureScopes) before it buys.
    block = tmp_path / "shop-block"
    done = subprocess.run([sys.executable, "-m", "blockkit.cli", "new", str(block), "--template", "static",
                           "--defaults", "--goods"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    run = host(block)
    run.wait_outcome("ready")
    good = json.loads((block / "block.manifest.json").read_text())["goods"][0]["id"]
    run.frame.click(f"button[data-good='{good}']")
    run.frame.click(f"button[data-confirm='{good}']")
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]", timeout=WAIT_MS)
    run.page.click(".consent-allow")
    run.frame.wait_for_function(
        "() => { const e = document.querySelector('#shop-status'); return e && e.textContent.startsWith('Bought'); }",
        timeout=WAIT_MS)
