"""Writing a fixed manifest: all or nothing, and never over someone's edit or a read-only file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from blockkit.fix.atomic import FileChanged, replace_file


def test_replaces_the_bytes_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(b"old")
    path.chmod(0o640)
    replace_file(path, b"new", b"old")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["m.json"]


def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(b"edited by the user")
    with pytest.raises(FileChanged) as caught:
        replace_file(path, b"new", b"old")
    assert path.read_bytes() == b"edited by the user"
    # The command prefixes the path itself: the message must not repeat it.
    assert str(path) not in str(caught.value) and "changed on disk" in str(caught.value)


def test_a_read_only_file_is_refused_even_for_root(tmp_path: Path) -> None:
    # A rename needs only a writable directory, so without this check the file would be replaced.
    path = tmp_path / "m.json"
    path.write_bytes(b"old")
    path.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        replace_file(path, b"new", b"old")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["m.json"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_root_keeps_the_files_owner(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(b"old")
    os.chown(path, 65534, 65534)
    replace_file(path, b"new", b"old")
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)
