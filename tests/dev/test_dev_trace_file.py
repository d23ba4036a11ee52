"""The trace file never writes through a link planted in the block folder (review row 49)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blockkit.cli import main
from blockkit.dev.errors import DevError
from blockkit.dev.session import DevOptions, DevSession
from blockkit.dev.trace import TraceLog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
VICTIM_TEXT = "IMPORTANT USER FILE\n"


@pytest.fixture
def block(tmp_path: Path) -> Path:
    target = tmp_path / "block"
    shutil.copytree(FIXTURES / "handshake", target)
    return target


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


def start(block: Path, **options: Any) -> DevSession:
    session = DevSession(DevOptions(block_dir=block, **options))
    session.start()
    session.stop()
    return session


def test_a_planted_trace_symlink_is_refused_and_its_target_kept(block: Path, victim: Path) -> None:
    (block / ".blockkit").mkdir()
    (block / ".blockkit" / "dev-trace.jsonl").symlink_to(victim)
    with pytest.raises(DevError, match="is a symbolic link to .*victim.txt; remove it"):
        start(block)
    assert victim.read_text() == VICTIM_TEXT


def test_a_planted_blockkit_folder_symlink_is_refused(block: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "dev-trace.jsonl").write_text(VICTIM_TEXT)
    (block / ".blockkit").symlink_to(elsewhere)
    with pytest.raises(DevError, match=r"\.blockkit is a symbolic link"):
        start(block)
    assert (elsewhere / "dev-trace.jsonl").read_text() == VICTIM_TEXT


def test_a_dangling_blockkit_symlink_creates_nothing_where_it_points(block: Path, tmp_path: Path) -> None:
    (block / ".blockkit").symlink_to(tmp_path / "not-yet")
    with pytest.raises(DevError, match="symbolic link"):
        start(block)
    assert not (tmp_path / "not-yet").exists()


def test_a_hard_linked_trace_is_refused(block: Path, victim: Path) -> None:
    (block / ".blockkit").mkdir()
    os.link(victim, block / ".blockkit" / "dev-trace.jsonl")
    with pytest.raises(DevError, match="2 hard links"):
        start(block)
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_trace_is_refused_at_once(block: Path) -> None:
    (block / ".blockkit").mkdir()
    os.mkfifo(block / ".blockkit" / "dev-trace.jsonl")
    with pytest.raises(DevError, match="not a regular file"):
        start(block)


def test_a_trace_option_naming_a_symlink_is_refused(block: Path, victim: Path, tmp_path: Path) -> None:
    link = tmp_path / "trace-link.jsonl"
    link.symlink_to(victim)
    with pytest.raises(DevError, match="it is a symbolic link"):
        start(block, trace_path=link)
    assert victim.read_text() == VICTIM_TEXT


# Were the link followed, the command would serve on: the timeout makes that a failure, not a hang.
@pytest.mark.timeout(60)
def test_the_command_says_it_in_one_line(block: Path, victim: Path) -> None:
    (block / ".blockkit").mkdir()
    (block / ".blockkit" / "dev-trace.jsonl").symlink_to(victim)
    result = CliRunner().invoke(main, ["dev", str(block)])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("blockkit dev: refusing to write the trace to ") and "symbolic link" in line
    assert victim.read_text() == VICTIM_TEXT


def test_an_old_trace_is_replaced_and_missing_folders_are_made(block: Path) -> None:
    (block / ".blockkit").mkdir()
    old = block / ".blockkit" / "dev-trace.jsonl"
    old.write_text('{"seq": 1, "old": true}\n' * 50)
    session = start(block)
    assert session.trace_path == old and old.read_text() == ""

    deep = block / "a" / "b" / "t.jsonl"
    log = TraceLog(deep, root=block)
    log.append({"kind": "lifecycle", "event": "x"})
    log.close()
    assert '"event": "x"' in deep.read_text()


def test_memory_keeps_the_newest_events_and_the_file_keeps_them_all(tmp_path: Path) -> None:
    log = TraceLog(tmp_path / "trace.jsonl", memory_chars_max=2000)
    for n in range(200):
        log.append({"kind": "message", "n": n, "data": "x" * 50})
    log.close()
    kept = log.events()
    assert 0 < len(kept) < 200 and log.dropped == 200 - len(kept)
    assert [e["n"] for e in kept] == list(range(200 - len(kept), 200))  # the newest, in order
    assert [e["seq"] for e in kept] == [e["n"] + 1 for e in kept]  # seq counts every event, dropped or not
    assert sum(len(json.dumps(e, ensure_ascii=False)) + 1 for e in kept) <= 2000
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line)["n"] for line in lines] == list(range(200))


def test_one_event_larger_than_the_memory_cap_is_still_kept() -> None:
    log = TraceLog(None, memory_chars_max=10)
    log.append({"kind": "message", "data": "a" * 100})
    assert [e["data"] for e in log.events()] == ["a" * 100] and log.dropped == 0
    log.append({"kind": "message", "data": "b"})
    assert [e["data"] for e in log.events()] == ["b"] and log.dropped == 1


def test_e08_the_trace_file_is_private_and_holds_no_usable_token(block: Path) -> None:
    # Security review E08 (D3/D4): the trace was 0644 and held BLOCK_INIT's block token, which
    # another local process replayed. Now 0600, and each JWT is written as its claims.
    import base64
    import stat

    claims = {"sub": "user:7", "blockInstanceId": "bi_dev_victim", "scopes": ["buzz:read:self"]}
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    raw = f"eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.{body}.c2lnbmF0dXJlLW5vdC1jaGVja2Vk"
    path = block / ".blockkit" / "dev-trace.jsonl"
    log = TraceLog(path, root=block)
    log.append({"kind": "message", "type": "BLOCK_INIT", "data": {"payload": {"token": {"raw": raw}}}})
    log.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = path.read_text()
    assert raw not in text and body not in text
    [event] = [json.loads(line) for line in text.splitlines()]
    assert event["data"]["payload"]["token"]["raw"] == {"jwtClaims": claims}
    assert log.events()[0]["data"]["payload"]["token"]["raw"] == raw  # the host page's own view keeps it
