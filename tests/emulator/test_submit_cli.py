"""``blockkit submit``, ``blockkit submissions`` and ``blockkit withdraw`` end to end against a running
local platform, as subprocesses, with the platform CLI's exit statuses (0 ok, 1 generic, 2 usage or
400, 3 auth, 4 not found, 5 network, 6 rate limited), and the key never shown.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from emulator_helpers import blockkit, subprocess_env
from submit_env import SubmitPlatform, platform_fixture, submit_lower_then_higher

SUBMITTED = re.compile(r"^submitted (\S+) (\S+): (pubreq_[0-9A-Z]{26}) \(pending\)$")


platform = platform_fixture("submit-cli")


@pytest.fixture(scope="module")
def author_key(platform: SubmitPlatform) -> str:
    return platform.api_key(platform.user(moderator=True))


def env_for(platform: SubmitPlatform, key: str | None) -> dict[str, str]:
    env = subprocess_env(BLOCKKIT_BASE_URL=platform.base_url)
    env.pop("BLOCKKIT_API_KEY", None)
    if key is not None:
        env["BLOCKKIT_API_KEY"] = key
    return env


def scaffold(parent: Path, name: str) -> Path:
    made = blockkit("new", str(parent / name), "--template", "static", "--name", name, "--no-input", "--defaults",
                    env=subprocess_env())
    assert made.returncode == 0, made.stderr
    return parent / name


def test_submit_then_approve_then_a_lower_version_then_withdraw(platform: SubmitPlatform, author_key: str,
                                                               tmp_path: Path) -> None:
    block = scaffold(tmp_path, "Ship Me")
    env = env_for(platform, author_key)

    submitted = blockkit("submit", str(block), "--yes", env=env)
    assert submitted.returncode == 0, submitted.stderr
    match = SUBMITTED.match(submitted.stdout.strip())
    assert match is not None, submitted.stdout
    block_id, version, request_id = match.groups()
    assert (block_id, version) == ("ship-me", "0.1.0")
    assert "request body:" in submitted.stderr and "compressed:" in submitted.stderr
    assert author_key not in submitted.stdout + submitted.stderr

    listed = blockkit("submissions", "--format", "json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)["submissions"]}
    assert rows[request_id]["status"] == "pending"

    approved = blockkit("emulator", "submissions", "approve", request_id, "--data", str(platform.data))
    assert approved.returncode == 0, approved.stderr
    text = blockkit("submissions", "--block-id", "ship-me", env=env)
    assert text.returncode == 0
    assert text.stdout.strip() == f"{request_id}  ship-me  0.1.0  approved  https://ship-me.civit.ai/"

    pending_id = submit_lower_then_higher(block, env)
    for _ in range(2):  # a second withdraw of a withdrawn request is still a success
        withdrawn = blockkit("withdraw", pending_id, env=env)
        assert (withdrawn.returncode, withdrawn.stdout.strip()) == (0, f"withdrew {pending_id}")
    one = blockkit("submissions", "--id", pending_id, "--format", "json", env=env)
    assert json.loads(one.stdout)["submissions"][0]["status"] == "withdrawn"

    not_pending = blockkit("withdraw", request_id, env=env)
    assert not_pending.returncode == 1
    assert not_pending.stderr.strip() == "blockkit withdraw: 409: cannot withdraw a request in status approved"


def test_the_rejection_reason_reaches_the_submitter(platform: SubmitPlatform, author_key: str,
                                                   tmp_path: Path) -> None:
    block = scaffold(tmp_path, "Reject Me")
    env = env_for(platform, author_key)
    submitted = blockkit("submit", str(block), "--yes", "--format", "json", env=env)
    request_id = json.loads(submitted.stdout)["publishRequestId"]
    rejected = blockkit("emulator", "submissions", "reject", request_id, "--reason", "needs a privacy note",
                        "--data", str(platform.data))
    assert rejected.returncode == 0, rejected.stderr
    shown = blockkit("submissions", "--id", request_id, env=env)
    assert shown.stdout.strip() == f"{request_id}  reject-me  0.1.0  rejected  reason: needs a privacy note"


@pytest.mark.parametrize(("key", "code", "message"), [
    (None, 3, "blockkit submissions: no API key: set BLOCKKIT_API_KEY"),
    ("bogus-key-value", 3, "blockkit submissions: 401: Invalid API key"),
])
def test_auth_failures_exit_3(platform: SubmitPlatform, key: str | None, code: int, message: str) -> None:
    result = blockkit("submissions", env=env_for(platform, key))
    assert result.returncode == code
    assert result.stderr.startswith(message)
    if key is not None:
        assert key not in result.stdout + result.stderr


def test_a_user_outside_the_author_cohort_exits_3(platform: SubmitPlatform) -> None:
    outsider = platform.api_key(platform.user(moderator=False))
    result = blockkit("submissions", env=env_for(platform, outsider))
    assert (result.returncode, result.stderr.strip()) == (
        3, "blockkit submissions: 403: Apps are restricted to the Civitai team")


def test_not_found_exits_4_and_no_platform_exits_5(platform: SubmitPlatform, author_key: str) -> None:
    missing = blockkit("withdraw", "pubreq_00000000000000000000000000", env=env_for(platform, author_key))
    assert (missing.returncode, missing.stderr.strip()) == (4, "blockkit withdraw: 404: Publish request not found")
    gone = blockkit("submissions", "--base-url", "http://127.0.0.1:9", env=env_for(platform, author_key))
    assert gone.returncode == 5
    assert gone.stderr.strip().startswith("blockkit submissions: cannot reach http://127.0.0.1:9:")
    assert "Traceback" not in gone.stderr and len(gone.stderr.strip().splitlines()) == 1


def test_rate_limited_exits_6(platform: SubmitPlatform, tmp_path: Path) -> None:
    key = platform.api_key(platform.user(moderator=True))
    for _ in range(10):
        status, _, _ = platform.call("POST", "/api/v1/blocks/submit-version", {"bundleBase64": ""}, key=key)
        assert status == 400
    block = scaffold(tmp_path, "Rate Me")
    result = blockkit("submit", str(block), "--yes", env=env_for(platform, key))
    assert result.returncode == 6, result.stderr
    assert re.search(r"blockkit submit: 429: Rate limit exceeded \(retry after \d+ s\)$", result.stderr.strip())


def test_no_terminal_without_yes_uploads_nothing(platform: SubmitPlatform, author_key: str, tmp_path: Path) -> None:
    block = scaffold(tmp_path, "Ask First")
    result = blockkit("submit", str(block), env=env_for(platform, author_key), input="")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == "blockkit submit: no terminal to ask on: pass --yes to upload"
    listed = blockkit("submissions", "--block-id", "ask-first", env=env_for(platform, author_key))
    assert listed.stdout.strip() == "no submissions"


def test_a_bundle_with_errors_is_not_uploaded(platform: SubmitPlatform, author_key: str, tmp_path: Path) -> None:
    block = scaffold(tmp_path, "Broken Block")
    manifest = json.loads((block / "block.manifest.json").read_text())
    manifest["iframe"]["sandbox"] = "allow-scripts allow-same-origin allow-top-navigation"
    manifest["contentRating"] = "not-a-rating"
    (block / "block.manifest.json").write_text(json.dumps(manifest, indent=2))
    result = blockkit("submit", str(block), "--yes", env=env_for(platform, author_key))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("blockkit submit: not submitted: the bundle has")
    listed = blockkit("submissions", "--block-id", "broken-block", env=env_for(platform, author_key))
    assert listed.stdout.strip() == "no submissions"


def test_the_token_file_must_be_private(platform: SubmitPlatform, author_key: str, tmp_path: Path) -> None:
    token_file = tmp_path / "key.txt"
    token_file.write_text(author_key + "\n")
    os.chmod(token_file, 0o644)
    loose = blockkit("submissions", "--token-file", str(token_file), env=env_for(platform, None))
    assert loose.returncode == 2
    assert "other users can read it (mode 0644); chmod 600 it first" in loose.stderr
    os.chmod(token_file, 0o600)
    private = blockkit("submissions", "--token-file", str(token_file), env=env_for(platform, None))
    assert private.returncode == 0, private.stderr
    assert author_key not in private.stdout + private.stderr


def test_the_key_is_no_command_line_option() -> None:
    result = blockkit("submit", "--api-key", "secret-value")
    assert result.returncode == 2
    assert "No such option" in result.stderr and "secret-value" not in result.stdout


def test_emulator_exec_passes_an_api_key_for_the_user(platform: SubmitPlatform) -> None:
    import sys

    moderator = platform.user(moderator=True)
    env = subprocess_env()
    env.pop("BLOCKKIT_API_KEY", None)
    env.pop("BLOCKKIT_BASE_URL", None)
    result = blockkit("emulator", "exec", "--no-access-key", "--user", moderator, "--", sys.executable, "-m",
                      "blockkit", "submissions", env=env, timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, "no submissions"), result.stderr
