"""``blockkit emulator client add``: a real subprocess against a running emulator's data directory."""

from __future__ import annotations

import json

import pytest
from emulator_helpers import blockkit
from oauth_env import OAuthEnv


def test_client_add_while_running_and_usable_at_once(oauth: OAuthEnv) -> None:
    owner = oauth.user("creator")
    done = blockkit("emulator", "client", "add", "--name", "cli app", "--redirect-uri", "http://127.0.0.1:5/cb",
                    "--redirect-uri", "http://127.0.0.1:5/cb2", "--confidential", "--allowed-scopes", "65537",
                    "--allowed-origin", "http://127.0.0.1:5", "--owner", owner["username"],
                    "--data", str(oauth.emu.data_dir))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert set(printed) == {"client_id", "client_secret"}
    answer = oauth.token({"grant_type": "client_credentials", **printed})
    assert answer.status_code == 200 and answer.json()["scope"] == "65537"
    assert oauth.userinfo(answer.json()["access_token"]).json()["id"] == owner["id"]
    with oauth.emu.store.read() as db:
        uris, origins, confidential = db.execute(
            "SELECT redirect_uris, allowed_origins, is_confidential FROM oauth_clients WHERE id = ?",
            (printed["client_id"],)).fetchone()
    assert json.loads(uris) == ["http://127.0.0.1:5/cb", "http://127.0.0.1:5/cb2"]
    assert json.loads(origins) == ["http://127.0.0.1:5"] and confidential == 1


def test_public_client_prints_no_secret(oauth: OAuthEnv) -> None:
    done = blockkit("emulator", "client", "add", "--name", "spa", "--redirect-uri", "http://127.0.0.1:5/cb",
                    "--data", str(oauth.emu.data_dir))
    assert done.returncode == 0 and set(json.loads(done.stdout)) == {"client_id"}


@pytest.mark.parametrize("args, needle", [
    (["--redirect-uri", "/relative"], "absolute"),
    (["--redirect-uri", "http://127.0.0.1/cb#frag"], "fragment"),
    (["--redirect-uri", "http://127.0.0.1/cb", "--owner", "nobody-at-all"], "no such user"),
    (["--redirect-uri", "http://127.0.0.1/cb", "--allowed-scopes", "33554432"], "Full"),
    (["--redirect-uri", "http://127.0.0.1/cb", "--allowed-origin", "http://x.example/path"], "origin"),
])
def test_bad_input_is_one_line_and_exit_2(oauth: OAuthEnv, args: list[str], needle: str) -> None:
    done = blockkit("emulator", "client", "add", "--name", "bad", *args, "--data", str(oauth.emu.data_dir))
    assert done.returncode == 2 and needle in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
