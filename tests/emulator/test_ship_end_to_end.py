"""Ship a block on the local platform, end to end, as subprocesses (issue 34's Tests bullet):
``blockkit new`` (static) -> ``blockkit emulator apikey add`` -> ``blockkit submit --yes`` ->
``blockkit submissions`` (pending) -> ``blockkit emulator submissions approve`` ->
``blockkit dev --approved --check`` serving the approved files, not the working tree's ->
a lower version refused -> ``blockkit withdraw`` of a new pending one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emulator_helpers import blockkit, subprocess_env
from submit_env import SubmitPlatform, platform_fixture, submit_lower_then_higher

WORKING_TREE_ONLY = "working-tree-only: this page was served from the working tree"


platform = platform_fixture("ship")


def test_ship_a_static_block_on_the_local_platform(platform: SubmitPlatform, tmp_path: Path) -> None:
    made = blockkit("new", str(tmp_path / "ship-end"), "--template", "static", "--name", "Ship End", "--no-input",
                    "--defaults")
    assert made.returncode == 0, made.stderr
    block = tmp_path / "ship-end"

    minted = blockkit("emulator", "apikey", "add", "--user", platform.user(moderator=True),
                      "--data", str(platform.data))
    assert minted.returncode == 0, minted.stderr
    key = json.loads(minted.stdout)["api_key"]
    env = subprocess_env(BLOCKKIT_BASE_URL=platform.base_url, BLOCKKIT_API_KEY=key,
                         BLOCKKIT_DEV_DATA=str(tmp_path / "dev-platform"))

    submitted = blockkit("submit", str(block), "--yes", "--format", "json", env=env)
    assert submitted.returncode == 0, submitted.stderr
    request_id = json.loads(submitted.stdout)["publishRequestId"]

    listed = blockkit("submissions", "--block-id", "ship-end", "--format", "json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [(r["id"], r["status"]) for r in json.loads(listed.stdout)["submissions"]] == [(request_id, "pending")]

    approved = blockkit("emulator", "submissions", "approve", request_id, "--data", str(platform.data))
    assert approved.returncode == 0, approved.stderr

    # The working tree moves on: its page now logs an error, which fails a check of the working tree.
    index = block / "index.html"
    approved_html = index.read_text()
    index.write_text(approved_html.replace("</body>", f"<script>console.error({WORKING_TREE_ONLY!r})</script></body>"))
    assert WORKING_TREE_ONLY in index.read_text()

    working = blockkit("dev", str(block), "--check", env=env, timeout=180)
    assert working.returncode == 1 and WORKING_TREE_ONLY in working.stdout, working.stdout + working.stderr

    served = blockkit("dev", str(block), "--approved", "--data", str(platform.data), "--check", env=env,
                      timeout=180)
    assert served.returncode == 0, served.stdout + served.stderr
    assert WORKING_TREE_ONLY not in served.stdout + served.stderr
    source = platform.data / "approved" / "ship-end" / request_id / "src"
    assert f"note: serving approved ship-end 0.1.0 ({request_id}) from {source}" in served.stderr
    assert (source / "index.html").read_text() == approved_html

    pending_id = submit_lower_then_higher(block, env)
    withdrawn = blockkit("withdraw", pending_id, env=env)
    assert (withdrawn.returncode, withdrawn.stdout.strip()) == (0, f"withdrew {pending_id}")
    rows = json.loads(blockkit("submissions", "--block-id", "ship-end", "--format", "json", env=env).stdout)
    assert {r["id"]: r["status"] for r in rows["submissions"]} == {request_id: "approved", pending_id: "withdrawn"}
