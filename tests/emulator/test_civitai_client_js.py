"""The published @civitai/client (npm), run by node against a live emulator's orchestration origin.

``js/civitai_client_workflows.mjs`` calls submitWorkflow, getWorkflow, queryWorkflows (tags, cursor),
addWorkflowTag, removeWorkflowTag, patchWorkflow, getWorkflowStep and deleteWorkflow with the real
client and prints what it got back; this test asserts on it. The client is installed once per
machine into a cache directory (``npm install``, the npm registry), as CI can.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from blockkit.emulator import buzz
from blockkit.emulator.orchestration.funds import create_api_key

pytestmark = pytest.mark.slow  # a real `npm install` (cached after the first run)

CLIENT = "@civitai/client"
VERSION = "0.2.0-beta.86"
SCRIPT = Path(__file__).parent / "js" / "civitai_client_workflows.mjs"
# The package's ES modules import folders and extensionless paths, as bundlers resolve them; node needs
# a resolve hook that does the same (js/bundler_resolution.mjs; the client itself is untouched).
REGISTER = SCRIPT.parent / "register_resolution.mjs"
CACHE = Path(os.environ.get("BLOCKKIT_NPM_CACHE", Path(tempfile.gettempdir()) / "blockkit-test-npm"))


def installed_client() -> Path:
    """A directory whose node_modules holds @civitai/client at VERSION (installed on first use)."""
    target = CACHE / f"civitai-client-{VERSION}"
    manifest = target / "node_modules" / "@civitai" / "client" / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text())["version"] == VERSION:
        return target
    # Neither node nor npm is optional here: CI installs them (scripts/test.sh), and a client test
    # that skips proves nothing.
    assert shutil.which("node") and shutil.which("npm"), "node and npm are needed (apt-get install nodejs npm)"
    CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="civitai-client-", dir=CACHE))
    (staging / "package.json").write_text('{"private": true}')
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{CLIENT}@{VERSION}"],
                          cwd=staging, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        staging.rename(target)  # atomic: a concurrent run either wins or finds the finished copy
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def run_script(client_dir: Path, work: Path, env: dict[str, str]) -> dict[str, Any]:
    # ESM resolves bare imports from the script's own folder, so the script runs beside node_modules.
    (work / "node_modules").symlink_to(client_dir / "node_modules", target_is_directory=True)
    for name in (SCRIPT.name, REGISTER.name, "bundler_resolution.mjs"):
        shutil.copyfile(SCRIPT.parent / name, work / name)
    done = subprocess.run(["node", "--import", f"./{REGISTER.name}", str(work / SCRIPT.name)], cwd=work,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **env}, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_real_client_drives_the_workflow_operations(live_emulator: Any, tmp_path: Path) -> None:
    client_dir = installed_client()
    with live_emulator.store.read() as db:
        username, user_id = db.execute("SELECT username, id FROM users WHERE status = 'active' AND deleted_at IS NULL"
                                       " ORDER BY id LIMIT 1").fetchone()
    key = create_api_key(live_emulator.store, live_emulator.clock, username)["api_key"]
    before = sum(buzz.balance(live_emulator.store, live_emulator.clock, user_id).values())
    urls = live_emulator.urls
    out = run_script(client_dir, tmp_path, {"ORCH_URL": urls.orchestration_url, "BASE_URL": urls.base_url,
                                            "API_KEY": key})

    first, second = out["submit"]["data"], out["submitOther"]["data"]
    assert out["submit"]["status"] == 200 and first["id"].startswith("wf-") and first["tags"] == ["fox"]
    assert out["get"]["status"] == 200 and out["get"]["data"]["status"] == "succeeded"  # a minute later
    assert [w["id"] for w in out["queryTags"]["data"]["items"]] == [first["id"]]
    page1, page2 = out["queryPage1"]["data"], out["queryPage2"]["data"]
    assert [w["id"] for w in page1["items"]] == [second["id"]] and page1["next"]
    assert [w["id"] for w in page2["items"]] == [first["id"]] and page2["next"] == ""

    for name in ("addTag", "addTag2", "removeTag", "patch", "delete"):
        assert out[name]["status"] == 204 and out[name]["error"] is None, (name, out[name])
    assert out["patchBad"]["status"] == 400 and out["patchBad"]["error"]["status"] == 400
    assert "/cost" in out["patchBad"]["error"]["detail"]
    edited = out["afterEdits"]["data"]
    assert edited["tags"] == ["fox", "kept/with slash", "patched"]
    assert edited["metadata"] == {"title": "a red fox", "rating": 5}
    assert [w["id"] for w in out["queryAfterEdits"]["data"]["items"]] == [first["id"]]

    step = out["step"]["data"]
    assert out["step"]["status"] == 200 and step["name"] == "gen" and step["status"] == "succeeded"
    assert step["metadata"] == {"pass": 1} and step["output"]["images"]
    assert out["stepMissing"]["status"] == 404

    assert out["getDeleted"]["status"] == 404 and out["deleteAgain"]["status"] == 404
    assert [w["id"] for w in out["queryAfterDelete"]["data"]["items"]] == [first["id"]]
    # The deleted workflow had not started: its Buzz came back; the finished one stays paid.
    after = sum(buzz.balance(live_emulator.store, live_emulator.clock, user_id).values())
    assert after == before - first["cost"]["total"]
