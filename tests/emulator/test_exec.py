"""``blockkit emulator exec -- COMMAND``: the environment, the exit status, signals, no orphans, export."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BLOCKKIT = [sys.executable, "-m", "blockkit"]


def run_exec(*args: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BLOCKKIT, "emulator", "exec", *args], capture_output=True, text=True, timeout=timeout,
                          **kwargs)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def wait_for(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_command_gets_the_urls_and_they_answer(tmp_path: Path) -> None:
    script = ("import json, os, urllib.request\n"
              "urls = {k: os.environ[k] for k in ('BLOCKKIT_BASE_URL', 'BLOCKKIT_AUTH_URL',"
              " 'BLOCKKIT_ORCHESTRATION_URL')}\n"
              "status = urllib.request.urlopen(urls['BLOCKKIT_BASE_URL'] + '/api/v1/enums').status\n"
              "print(json.dumps({'urls': urls, 'status': status}))\n")
    result = run_exec("--", sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["status"] == 200
    assert all(url.startswith("http://127.0.0.1:") for url in seen["urls"].values())


@pytest.mark.parametrize("code", [0, 1, 3, 77])
def test_exit_status_is_the_commands(code: int) -> None:
    result = run_exec("--", sys.executable, "-c", f"raise SystemExit({code})")
    assert result.returncode == code, result.stderr


def test_a_command_killed_by_a_signal_gives_128_plus_n() -> None:
    result = run_exec("--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert result.returncode == 128 + signal.SIGKILL


def test_user_option_gives_a_working_token() -> None:
    script = ("import os, urllib.request, json\n"
              "assert os.environ['CIVITAI_TOKEN'] == os.environ['BLOCKKIT_ACCESS_TOKEN']\n"
              "req = urllib.request.Request(os.environ['BLOCKKIT_BASE_URL'] + '/api/v1/me',"
              " headers={'Authorization': 'Bearer ' + os.environ['BLOCKKIT_ACCESS_TOKEN']})\n"
              "print(json.loads(urllib.request.urlopen(req).read())['username'])\n")
    users = subprocess.run([*BLOCKKIT, "emulator", "users", "--format", "json"], capture_output=True, text=True,
                           check=True)
    name = [u for u in json.loads(users.stdout)["users"] if u["id"] > 0 and u["status"] == "active"][0]["username"]
    result = run_exec("--user", name, "--", sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == name


def test_the_command_gets_the_access_key_and_others_are_refused() -> None:
    script = ("import os, json, urllib.request, urllib.error\n"
              "base = os.environ['BLOCKKIT_BASE_URL']\n"
              "def advance(headers):\n"
              "    req = urllib.request.Request(base + '/__emulator/clock', data=b'{\"advance\": 1}',"
              " headers={'Content-Type': 'application/json', **headers}, method='POST')\n"
              "    try:\n        return urllib.request.urlopen(req).status\n"
              "    except urllib.error.HTTPError as exc:\n        return exc.code\n"
              "print(advance({}), advance({'X-Blockkit-Access-Key': os.environ['BLOCKKIT_ACCESS_KEY']}))\n")
    result = run_exec("--", sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["401", "200"]


def test_unknown_command_is_one_line_and_exit_2() -> None:
    result = run_exec("--", "no-such-command-xyz")
    assert result.returncode == 2
    assert result.stderr.strip() == "blockkit emulator: no-such-command-xyz: command not found"


def test_sigterm_reaches_the_command_then_the_emulator_stops(tmp_path: Path) -> None:
    marker = tmp_path / "got"
    ready = tmp_path / "ready"
    script = ("import signal, sys, time, pathlib\n"
              f"def bye(n, f):\n    pathlib.Path({str(marker)!r}).write_text(str(n)); sys.exit(7)\n"
              "signal.signal(signal.SIGTERM, bye)\n"
              f"pathlib.Path({str(ready)!r}).write_text('1')\n"
              "time.sleep(60)\n")
    ready_file = tmp_path / "emu.json"
    proc = subprocess.Popen([*BLOCKKIT, "emulator", "exec", "--ready-file", str(ready_file), "--", sys.executable,
                             "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(ready)
        info = json.loads(ready_file.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 7
    finally:
        proc.kill()
    assert marker.read_text() == str(int(signal.SIGTERM))
    assert not ready_file.exists()  # the emulator stopped and cleaned up
    import httpx

    with pytest.raises(httpx.TransportError):
        httpx.get(info["base_url"] + "/api/v1/enums", timeout=2)


def test_sigint_reaches_the_command(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = ("import pathlib, time\n"
              f"pathlib.Path({str(ready)!r}).write_text('1')\n"
              "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    raise SystemExit(42)\n")
    proc = subprocess.Popen([*BLOCKKIT, "emulator", "exec", "--", sys.executable, "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(ready)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 42
    finally:
        proc.kill()


def test_a_crashing_command_leaves_no_orphan(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"sleep 300 & echo $! > {pidfile}; exit 9"
    result = run_exec("--", "sh", "-c", script)
    assert result.returncode == 9
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the command's background child outlived exec"


def test_kill_9_of_blockkit_takes_the_command_with_it(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"import os, pathlib, time\npathlib.Path({str(pidfile)!r}).write_text(str(os.getpid()))\ntime.sleep(300)\n"
    proc = subprocess.Popen([*BLOCKKIT, "emulator", "exec", "--", sys.executable, "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = int(wait_for(pidfile))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the command outlived a kill -9 of blockkit"
    finally:
        proc.kill()


def test_export_on_exit_keeps_the_final_state(tmp_path: Path) -> None:
    target = tmp_path / "final"
    script = ("import os, json, urllib.request\n"
              "base = os.environ['BLOCKKIT_BASE_URL']\n"
              "req = urllib.request.Request(base + '/__emulator/clock', data=json.dumps({'advance': 86400}).encode(),"
              " headers={'Content-Type': 'application/json', 'X-Blockkit-Access-Key': os.environ['BLOCKKIT_ACCESS_KEY']},"
              " method='POST')\n"
              "urllib.request.urlopen(req)\n")
    result = run_exec("--export-on-exit", str(target), "--", sys.executable, "-c", script)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["tables"]["users"]["rows"] > 0
    # again: an earlier export is replaced, not refused
    again = run_exec("--export-on-exit", str(target), "--", "true")
    assert again.returncode == 0, again.stderr
    # it starts again from that state
    imported = run_exec("--import", str(target), "--", sys.executable, "-c",
                        "import os, json, urllib.request; print(json.loads(urllib.request.urlopen("
                        "os.environ['BLOCKKIT_BASE_URL'] + '/__emulator/clock').read())['now'])")
    assert imported.returncode == 0, imported.stderr


def test_export_on_exit_refuses_a_directory_of_other_files(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    result = run_exec("--export-on-exit", str(target), "--", "true")
    assert result.returncode == 2
    assert "is not an earlier export" in result.stderr
    assert (target / "notes.txt").read_text() == "keep me"
