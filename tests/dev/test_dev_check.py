"""``blockkit dev --check`` end to end: a real process, real Chromium, one verdict."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
# The failure schedules at a tenth of their length (a page gives up after 3.7 s).
FAST = ["--time-scale", "0.1"]


@pytest.fixture(autouse=True)
def _needs_browser(browser: Any) -> None:
    """Skip (or, in CI, fail) exactly when the other browser tests do."""


def check(block: Path, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(block), "--check", "--trace", str(tmp_path / "t.jsonl"), *args],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_a_good_block_passes(tmp_path: Path) -> None:
    result = check(FIXTURES / "handshake", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("ok: handshake completed in ") and first.endswith("ms (handshake-demo on page)")
    assert "Traceback" not in result.stderr


def test_a_silent_page_never_sent_block_ready(tmp_path: Path, make_block: Any) -> None:
    result = check(make_block(behaviour={"ready": False}), *FAST, tmp_path=tmp_path)
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("fail: never sent BLOCK_READY (scripted-block on page)")
    assert "gave up after 3 attempts and showed its failure card" in first
    assert "the block sent only BLOCK_HELLO" in first


def test_a_silent_slot_collapses(tmp_path: Path, make_block: Any) -> None:
    result = check(make_block(behaviour={"ready": False, "hello": False}), "--surface", "model.below_images", *FAST, tmp_path=tmp_path)
    assert result.returncode == 1
    assert "never sent BLOCK_READY" in result.stdout and "collapsed" in result.stdout
    assert "sent no message at all" in result.stdout


def test_violations_are_listed(tmp_path: Path, make_block: Any) -> None:
    behaviour = {"afterReady": ["BLOCK_READY", {"type": "APP_STORAGE_GET", "payload": {"requestId": "g", "key": "k"}}]}
    result = check(make_block(manifest={"scopes": []}, behaviour=behaviour), *FAST, tmp_path=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("fail: contract violations (2)") and "handshake completed in" in lines[0]
    assert any(line.startswith("  - envelope:") for line in lines)
    assert any(line.startswith("  - undeclared-scope APP_STORAGE_GET:") for line in lines)



def test_a_request_sent_late_in_the_watch_is_still_judged(tmp_path: Path, make_block: Any) -> None:
    # Sent 800 ms after BLOCK_READY: its 1 s reply timeout ends after the 1.5 s watch does.
    # TRACK_EVENT gets no reply on the platform, so a block that awaits one hangs.
    late = {"type": "TRACK_EVENT", "payload": {"eventName": "opened", "requestId": "late-1"}}
    block = make_block(behaviour={"afterReady": [late], "afterReadyDelayMs": 800})
    result = check(block, "--format", "json", tmp_path=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert [(v["kind"], v["type"]) for v in verdict["violations"]] == [("unanswered-request", "TRACK_EVENT")]
    assert "'late-1'" in verdict["violations"][0]["explanation"]

def test_console_errors_fail_the_check(tmp_path: Path, make_block: Any) -> None:
    behaviour = {"consoleError": "boom from the block", "throwError": "uncaught from the block"}
    result = check(make_block(behaviour=behaviour), *FAST, "--format", "json", tmp_path=tmp_path)
    assert result.returncode == 1
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "console-errors" and verdict["ok"] is False
    assert verdict["outcome"] == "ready" and verdict["violations"] == []
    texts = [e["text"] for e in verdict["consoleErrors"]]
    assert any("boom from the block" in t for t in texts)
    assert any("uncaught from the block" in t for t in texts)
    assert {e["source"] for e in verdict["consoleErrors"]} == {"block"}


def test_json_verdict_of_a_good_block(tmp_path: Path) -> None:
    result = check(FIXTURES / "handshake", "--format", "json", tmp_path=tmp_path)
    assert result.returncode == 0
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "handshake-completed" and verdict["ok"] is True
    assert verdict["handshakeMs"] > 0 and verdict["attempts"] == 1
    assert verdict["sentTypes"] == ["BLOCK_HELLO", "BLOCK_READY"]
    assert Path(verdict["trace"]).is_file()


@pytest.mark.parametrize("how", ["option", "variable"])
def test_the_named_browser_is_the_one_driven(tmp_path: Path, how: str) -> None:
    import shutil

    system = shutil.which("chromium")
    assert system is not None
    log = tmp_path / "used.log"
    wrapper = tmp_path / "my chromium"  # a space in the path, as on many desktops
    wrapper.write_text(f'#!/bin/sh\necho used >> "{log}"\nexec "{system}" "$@"\n')
    wrapper.chmod(0o755)
    args = ["--browser", str(wrapper)] if how == "option" else []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if how == "variable":
        env["BLOCKKIT_BROWSER"] = str(wrapper)
    result = subprocess.run(
        [sys.executable, "-m", "blockkit.cli", "dev", str(FIXTURES / "handshake"), "--check", "--trace",
         str(tmp_path / "t.jsonl"), *args],
        capture_output=True, check=False, text=True, timeout=120, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert log.read_text().split() == ["used"]


SELLER = {"scopes": ["buzz:read:self", "goods:purchase:self"],
          "scopeJustifications": {"goods:purchase:self": "Sells a pack."},
          "goods": [{"id": "pack", "title": "Pack", "priceBuzz": 10}]}


def test_failed_brokered_calls_are_reported_and_fail_the_check(tmp_path: Path, make_block: Any) -> None:
    # Saving a data: URL is the block's own mistake (the platform saves only its image hosts' URLs): it
    # fails the check. A balance asked for while signed out is refused for the viewer's state: listed,
    # and it would not fail the check alone.
    behaviour = {"afterReady": [{"type": "SAVE_IMAGE", "payload": {"requestId": "g1", "url": "data:image/png;base64,AA=="}},
                                {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b1"}}]}
    block = make_block(manifest=SELLER, behaviour=behaviour)
    result = check(block, "--anonymous", "--format", "json", tmp_path=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "failed-calls" and verdict["ok"] is False and verdict["violations"] == []
    calls = {c["type"]: c for c in verdict["failedCalls"]}
    save = calls["SAVE_IMAGE"]
    assert save["error"] == "url_not_allowed" and save["failsCheck"] is True
    assert save["requestId"] == "g1" and save["cause"] == "request" and save["message"] == "image url is not allowed"
    assert calls["GET_BUZZ_BALANCE"]["error"] == "SIGN_IN_REQUIRED" and calls["GET_BUZZ_BALANCE"]["failsCheck"] is False

    text = check(block, "--anonymous", tmp_path=tmp_path)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith("fail: failed brokered calls (1) (scripted-block on page)")
    assert any(line.startswith("  - SAVE_IMAGE: url_not_allowed: image url is not allowed") for line in lines)


def test_a_refusal_for_a_signed_out_viewer_alone_passes(tmp_path: Path, make_block: Any) -> None:
    behaviour = {"afterReady": [{"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "b1"}}]}
    result = check(make_block(manifest=SELLER, behaviour=behaviour), "--anonymous", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok: handshake completed")
    assert ("  - GET_BUZZ_BALANCE: SIGN_IN_REQUIRED: buzz balance requires an authenticated viewer [the viewer's state"
            in result.stdout)


def test_the_wait_for_block_ready_shows_progress(tmp_path: Path, make_block: Any) -> None:
    # Issue 21: --check was silent for 39 s on a block that never sends BLOCK_READY. On a terminal
    # a status line says what it waits for and how long, rewritten every second; the verdict
    # follows on a clean line.
    import pexpect

    block = make_block(behaviour={"ready": False, "throwError": "no config"})
    child = pexpect.spawn(sys.executable, ["-m", "blockkit.cli", "dev", str(block), "--check", "--trace",
                                           str(tmp_path / "t.jsonl"), "--time-scale", "0.1"],
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}, encoding="utf-8", timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    screen = child.before
    updates = [part for part in screen.split("\r") if "waiting for BLOCK_READY from scripted-block" in part]
    # The page gives up after 3.7 s here: an update at the start and about every second after.
    assert len(updates) >= 3, screen
    assert all("of at most 19 s" in u for u in updates), updates
    assert any("(attempt 2 of 3)" in u or "(attempt 3 of 3)" in u for u in updates), updates
    verdict = screen[screen.index("fail: never sent BLOCK_READY"):]
    assert "waiting for" not in verdict
    # The same uncaught error of the three attempts: listed once, with its count.
    assert verdict.count("no config") == 1 and "(3 times)" in verdict


def test_the_progress_is_one_line_per_wait_off_a_terminal(tmp_path: Path, make_block: Any) -> None:
    result = check(make_block(behaviour={"ready": False}), *FAST, tmp_path=tmp_path)
    assert result.returncode == 1
    waits = [line for line in result.stderr.splitlines() if line.startswith("waiting for BLOCK_READY")]
    assert waits[0] == "waiting for BLOCK_READY from scripted-block (attempt 1 of 3): 0 s of at most 19 s", waits
    # Issue 37: attempts 2 and 3 printed nothing (about 40 s of silence in a CI log): a line as each starts.
    attempts = [re.search(r"\(attempt (\d) of 3\)", line) for line in waits]
    assert [int(m.group(1)) for m in attempts if m] == [1, 2, 3], result.stderr
    assert all(re.fullmatch(r"waiting for BLOCK_READY from scripted-block \(attempt \d of 3\): \d+ s of at most 19 s",
                            line) for line in waits), waits
    assert result.stdout.startswith("fail: never sent BLOCK_READY")
