"""``blockkit emulator``: start (ready file, three origins, signals, data), users, export, import, reset."""

from __future__ import annotations

import hashlib
import json
import signal
import socket
import sqlite3
from pathlib import Path
from typing import Any, Callable

import pytest
from emulator_helpers import Started, blockkit, get_json, post_json

from blockkit.emulator.store import DB_FILENAME


def test_ready_file_and_the_three_origins(emulator: dict[str, Any]) -> None:
    assert set(emulator) == {"base_url", "auth_url", "orchestration_url", "pid", "data", "console_url"}
    assert emulator["console_url"] == emulator["base_url"] + "/__emulator/"
    ports = {emulator[k].rsplit(":", 1)[1] for k in ("base_url", "auth_url", "orchestration_url")}
    assert len(ports) == 3
    for key in ("base_url", "auth_url", "orchestration_url"):
        assert emulator[key].startswith("http://127.0.0.1:")
    status, body = get_json(f"{emulator['base_url']}/api/v1/enums")
    assert status == 200
    assert body["ModelType"][0] == "Checkpoint" and "LORA" in body["ModelType"]
    assert set(body) == {"ModelType", "ModelFileType", "ActiveBaseModel", "BaseModel", "BaseModelType"}
    assert set(body["ActiveBaseModel"]) < set(body["BaseModel"])
    assert body["BaseModelType"] == ["Standard", "Inpainting", "Refiner", "Pix2Pix"]
    # An unknown path answers JSON 404: the catalogue's body on auth, ProblemDetails on orchestration.
    status, body = get_json(f"{emulator['auth_url']}/anything")
    assert status == 404 and body == {"error": "Not found"}
    status, body = get_json(f"{emulator['orchestration_url']}/anything")
    assert status == 404 and body["status"] == 404 and body["title"] == "Not Found"


def _port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_it_cleanly_and_removes_the_temporary_data(start_emulator: Callable[..., Started],
                                                                   sig: int) -> None:
    started = start_emulator()
    data = Path(started.info["data"])
    assert (data / DB_FILENAME).is_file()
    status, _ = get_json(f"{started.info['base_url']}/api/v1/enums")
    assert status == 200
    code, out, err = started.stop(sig)
    assert code == 0, err
    assert "Traceback" not in err
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["base_url", "auth_url", "orchestration_url", "console"]
    assert lines[0].split()[1] == started.info["base_url"]
    assert lines[3].split()[1] == started.info["console_url"]  # the web console (no key: --no-access-key)
    assert not data.exists()
    assert not started.ready_file.exists()
    for key in ("base_url", "auth_url", "orchestration_url"):  # the ports are free again
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", _port_of(started.info[key]))) != 0


def test_data_persists_with_data_dir_and_nothing_is_lost(start_emulator: Callable[..., Started],
                                                         tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_emulator("--data", str(data))
    assert Path(first.info["data"]) == data.resolve()
    status, body = post_json(f"{first.info['base_url']}/__emulator/clock", {"advance": 86_400})
    assert status == 200
    code, _, _ = first.stop(signal.SIGTERM)
    assert code == 0
    # Stopped cleanly: the WAL was checkpointed into the database file.
    assert not (data / f"{DB_FILENAME}-wal").exists() or (data / f"{DB_FILENAME}-wal").stat().st_size == 0
    conn = sqlite3.connect(data / DB_FILENAME)
    assert conn.execute("SELECT value FROM meta WHERE key = 'clock_offset'").fetchone()[0] == "86400.0"
    conn.close()
    second = start_emulator("--data", str(data))
    _, body = get_json(f"{second.info['base_url']}/__emulator/clock")
    from datetime import datetime, timezone

    from blockkit.emulator.store.clock import parse_timestamp

    ahead = (parse_timestamp(body["now"]) - datetime.now(timezone.utc)).total_seconds()
    assert 86_400 - 60 < ahead < 86_400 + 60
    assert data.is_dir()


def test_another_seed_on_a_seeded_directory_keeps_the_data_and_says_so(start_emulator: Callable[..., Started],
                                                                       tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert blockkit("emulator", "reset", "--data", str(data)).returncode == 2  # nothing there yet
    first = start_emulator("--data", str(data), "--seed", "5")
    first.stop()
    second = start_emulator("--data", str(data), "--seed", "6")
    _, _, err = second.stop()
    assert "--seed 5" in err and "keeping it" in err
    users = json.loads(blockkit("emulator", "users", "--data", str(data), "--format", "json").stdout)
    seed5 = json.loads(blockkit("emulator", "users", "--seed", "5", "--format", "json").stdout)
    assert users == seed5


def _taken_port_after_a_free_one(taken: socket.socket) -> int:
    """Bind ``taken`` to a port P whose neighbour P-1 is free just now (an ephemeral port's
    neighbour may belong to another process, which would make the catalogue origin fail first)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1] + 1
        with socket.socket() as below:
            try:
                below.bind(("127.0.0.1", port - 1))
                taken.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    pytest.fail("no free pair of neighbouring ports on 127.0.0.1")


def test_a_busy_port_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        port = _taken_port_after_a_free_one(taken)
        taken.listen()
        # The busy port is the OAuth origin's (PORT+1); PORT itself was free a moment ago.
        result = blockkit("emulator", "start", "--port", str(port - 1), timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert f"127.0.0.1:{port}" in result.stderr and "OAuth" in result.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "example.com", "::"])
def test_a_host_that_is_not_loopback_is_refused(host: str) -> None:
    result = blockkit("emulator", "start", "--host", host)
    assert result.returncode == 2 and "loopback" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    (["--port", "70000"], "--port 70000"),
    (["--port", "-1"], "--port -1"),
    (["--seed", "-2"], "--seed -2"),
])
def test_bad_start_options_are_one_line_and_exit_2(args: list[str], words: str) -> None:
    result = blockkit("emulator", "start", *args)
    assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_loopback_hosts_are_accepted(start_emulator: Callable[..., Started]) -> None:
    started = start_emulator("--host", "localhost")
    assert started.info["base_url"].startswith("http://127.0.0.1:")
    assert get_json(f"{started.info['base_url']}/api/v1/enums")[0] == 200


def test_users_lists_id_username_tier_status(emulator: dict[str, Any]) -> None:
    text = blockkit("emulator", "users", "--data", emulator["data"])
    assert text.returncode == 0, text.stderr
    header, *rows = text.stdout.strip().splitlines()
    assert header.split()[:4] == ["id", "username", "tier", "status"]
    document = json.loads(blockkit("emulator", "users", "--data", emulator["data"], "--format", "json").stdout)
    users = document["users"]
    assert len(users) == len(rows)
    assert {u["tier"] for u in users} >= {"free", "founder", "bronze", "silver", "gold"}
    assert {u["status"] for u in users} == {"active", "muted", "banned"}
    system = next(u for u in users if u["id"] == -1)
    assert system["username"] == "civitai"
    # Without --data: the users of a fresh start with the same seed.
    assert json.loads(blockkit("emulator", "users", "--format", "json").stdout) == document


def test_export_import_round_trip_and_refusals(tmp_path: Path) -> None:
    assert blockkit("emulator", "export", str(tmp_path / "a")).returncode == 0
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["seed"] == 1 and manifest["scale"] == "small" and manifest["schema_version"] >= 1
    assert manifest["tables"]["users"]["rows"] == len((tmp_path / "a" / "users.jsonl").read_text().splitlines())
    # Rows in primary-key order.
    ids = [json.loads(line)["id"] for line in (tmp_path / "a" / "images.jsonl").read_text().splitlines()]
    assert ids == sorted(ids)
    data = tmp_path / "data"
    result = blockkit("emulator", "import", str(tmp_path / "a"), "--data", str(data))
    assert result.returncode == 0, result.stderr
    assert blockkit("emulator", "export", str(tmp_path / "b"), "--data", str(data)).returncode == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()} == \
        {p.name: p.read_bytes() for p in (tmp_path / "b").iterdir()}
    # A store with data is refused without --replace; the export target must be new or empty.
    again = blockkit("emulator", "import", str(tmp_path / "a"), "--data", str(data))
    assert again.returncode == 2 and "--replace" in again.stderr
    assert blockkit("emulator", "import", str(tmp_path / "a"), "--data", str(data), "--replace").returncode == 0
    assert blockkit("emulator", "export", str(tmp_path / "a")).returncode == 2
    assert blockkit("emulator", "import", str(tmp_path / "a")).returncode == 2  # no --data


def _edit_rows(export_dir: Path, table: str, old: str, new: str, *, reseal: bool, version: int | None = None) -> None:
    """Change one row of an export; ``reseal``: write the new sha256 into the manifest too (a careful edit)."""
    path = export_dir / f"{table}.jsonl"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    manifest = json.loads((export_dir / "manifest.json").read_text())
    if reseal:
        manifest["tables"][table]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    if version is not None:  # an export of an older blockkit: no table sha256
        manifest["version"] = version
        for entry in manifest["tables"].values():
            entry.pop("sha256", None)
    (export_dir / "manifest.json").write_text(json.dumps(manifest))


def _richer_balance(export_dir: Path, *, reseal: bool, version: int | None = None) -> None:
    """+1000 on one Buzz balance (R14: still valid JSON, imported before)."""
    first = (export_dir / "buzz_accounts.jsonl").read_text().splitlines()[0]
    row = json.loads(first)
    edited = json.dumps({**row, "balance": row["balance"] + 1000}, separators=(",", ":"))
    _edit_rows(export_dir, "buzz_accounts", first, edited, reseal=reseal, version=version)


@pytest.fixture(scope="module")
def export_with_buzz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export whose users hold Buzz accounts and ledger entries (the seed opens none)."""
    from blockkit.emulator import running

    folder = tmp_path_factory.mktemp("export-with-buzz")
    with running(data=folder / "data") as platform:
        for user in platform.users()[:3]:
            platform.set_balance(user.username, "blue", 500)
    assert blockkit("emulator", "export", str(folder / "e"), "--data", str(folder / "data")).returncode == 0
    return folder / "e"


def _strip_table_sha256(export_dir: Path) -> None:
    manifest = json.loads((export_dir / "manifest.json").read_text())
    for entry in manifest["tables"].values():
        del entry["sha256"]
    (export_dir / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("damage, words", [
    (lambda d: (d / "manifest.json").unlink(), "no manifest.json"),
    (lambda d: (d / "manifest.json").write_text("{"), "not valid JSON"),
    (lambda d: (d / "users.jsonl").write_text((d / "users.jsonl").read_text() + "[1]\n"), "JSON object"),
    (lambda d: (d / "tags.jsonl").write_text("\n".join((d / "tags.jsonl").read_text().splitlines()[:-1]) + "\n"),
     "rows, the manifest says"),
    (lambda d: (d / "users.jsonl").write_text((d / "users.jsonl").read_text() + '{"colour": 1}\n'),
     "unknown column"),
    (lambda d: _edit_rows(d, "model_versions", '"model_id":1,', '"model_id":999999,', reseal=True), "missing"),
    (lambda d: _edit_rows(d, "model_versions", '"model_id":1,', '"model_id":2,', reseal=False), "sha256 differs"),
    # R14: a balance edited by hand: the table's sha256, and, where that was made to agree (or in an
    # older export, which has none), the books.
    (lambda d: _richer_balance(d, reseal=False), "sha256 differs"),
    (lambda d: _richer_balance(d, reseal=True), "adds up to"),
    (lambda d: _richer_balance(d, reseal=False, version=2), "adds up to"),
    (lambda d: _strip_table_sha256(d), "has no sha256"),  # a version 3 manifest without them: edited
])
def test_a_bad_export_is_refused_before_anything_changes(tmp_path: Path, damage: Callable[[Path], Any],
                                                         words: str, export_with_buzz: Path) -> None:
    import shutil

    shutil.copytree(export_with_buzz, tmp_path / "e")
    damage(tmp_path / "e")
    data = tmp_path / "data"
    result = blockkit("emulator", "import", str(tmp_path / "e"), "--data", str(data))
    assert result.returncode == 2, result.stdout
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1
    # R15b: the refused import leaves nothing behind (it made the directory, an empty store in it)
    assert not data.exists(), sorted(p.name for p in data.rglob("*"))
    data.mkdir()
    assert blockkit("emulator", "import", str(tmp_path / "e"), "--data", str(data)).returncode == 2
    assert sorted(data.iterdir()) == []  # a directory that was there stays, empty


def test_an_edited_balance_is_refused_by_import_replace_under_a_running_server(tmp_path: Path,
                                                                             export_with_buzz: Path) -> None:
    """R14 on the path the review took: ``import --replace`` into the data directory a server is
    serving. The refusal changes nothing the running server answers."""
    import shutil

    import httpx

    from blockkit.emulator import running

    shutil.copytree(export_with_buzz, tmp_path / "e")
    _richer_balance(tmp_path / "e", reseal=True)
    with running(data=tmp_path / "data") as platform:
        user = platform.users()[0]
        platform.set_balance(user.username, "blue", 70)
        before = platform.balance(user.username), len(platform.ledger(user.username))
        result = blockkit("emulator", "import", str(tmp_path / "e"), "--replace", "--data", str(tmp_path / "data"))
        assert result.returncode == 2, result.stdout
        assert "adds up to" in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert (platform.balance(user.username), len(platform.ledger(user.username))) == before
        token = platform.oauth_token(user.username)
        me = httpx.get(f"{platform.api_url}/me", headers={"Authorization": f"Bearer {token}"})
        assert me.status_code == 200 and me.json()["username"] == user.username


def test_an_older_export_without_table_sha256_still_imports(tmp_path: Path) -> None:
    assert blockkit("emulator", "export", str(tmp_path / "e")).returncode == 0
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert manifest["version"] == 3 and all(len(t["sha256"]) == 64 for t in manifest["tables"].values())
    manifest["version"] = 2
    for entry in manifest["tables"].values():
        del entry["sha256"]
    (tmp_path / "e" / "manifest.json").write_text(json.dumps(manifest))
    result = blockkit("emulator", "import", str(tmp_path / "e"), "--data", str(tmp_path / "data"))
    assert result.returncode == 0, result.stderr


def test_the_cli_writes_while_the_server_runs(start_emulator: Callable[..., Started], tmp_path: Path) -> None:
    data = tmp_path / "data"
    started = start_emulator("--data", str(data))
    post_json(f"{started.info['base_url']}/__emulator/clock", {"advance": 10})
    before = json.loads(blockkit("emulator", "users", "--data", str(data), "--format", "json").stdout)
    result = blockkit("emulator", "reset", "--data", str(data), "--seed", "8")
    assert result.returncode == 0, result.stderr
    after = json.loads(blockkit("emulator", "users", "--data", str(data), "--format", "json").stdout)
    assert after != before
    assert after == json.loads(blockkit("emulator", "users", "--seed", "8", "--format", "json").stdout)
    # The server still serves, from the re-seeded store, and its clock offset survived the reset.
    assert get_json(f"{started.info['base_url']}/api/v1/enums")[0] == 200
    code, _, err = started.stop()
    assert code == 0, err
    conn = sqlite3.connect(data / DB_FILENAME)
    assert conn.execute("SELECT value FROM meta WHERE key = 'clock_offset'").fetchone()[0] == "10.0"
    assert conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()[0] == "8"
    conn.close()


def test_python_m_blockkit_and_help_list_the_emulator() -> None:
    result = blockkit("--help")
    assert result.returncode == 0 and "emulator" in result.stdout
    result = blockkit("emulator", "--help")
    for sub in ("start", "users", "export", "import", "reset"):
        assert sub in result.stdout


# --- emulator wait (issue 37: the documented wait loop hung for ever when start failed) --------------


def test_wait_takes_a_ready_file_its_emulator_wrote(tmp_path: Path) -> None:
    import os

    ready = tmp_path / "emulator.json"
    ready.write_text(json.dumps({"base_url": "http://127.0.0.1:1", "pid": os.getpid()}))
    done = blockkit("emulator", "wait", "--ready-file", str(ready), "--pid", str(os.getpid()))
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_wait_fails_at_once_when_the_start_ends_and_takes_no_other_runs_file(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from emulator_helpers import subprocess_env

    ready = tmp_path / "emulator.json"
    # Left by another emulator that still runs (this process stands in for it): not the one awaited.
    ready.write_text(json.dumps({"base_url": "http://127.0.0.1:1", "pid": os.getpid()}))
    starting = subprocess.Popen(["sleep", "60"])  # the start awaited, still going
    waiter = subprocess.Popen([sys.executable, "-m", "blockkit", "emulator", "wait", "--ready-file", str(ready),
                               "--pid", str(starting.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=subprocess_env())
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            waiter.wait(timeout=2)  # the other run's file does not pass
        starting.kill()  # the start fails; left unreaped (a zombie) until the waiter is done
        _out, err = waiter.communicate(timeout=30)
    finally:
        starting.kill()
        starting.wait()
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert waiter.returncode == 2
    assert err == f"blockkit emulator: the emulator (process {starting.pid}) ended before it was ready; its own" \
                  " message is above\n"


def test_wait_gives_up_after_its_timeout(tmp_path: Path) -> None:
    done = blockkit("emulator", "wait", "--ready-file", str(tmp_path / "never.json"), "--timeout", "0.2")
    assert done.returncode == 2
    assert done.stderr == f"blockkit emulator: {tmp_path / 'never.json'}: not written after 0.2 s (--timeout SECONDS" \
                          " waits longer)\n"
