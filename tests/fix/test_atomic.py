"""Writing a fixed manifest: all or nothing, and never over someone's edit or a read-only file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from blockkit.fix.atomic import (
    FileChanged,
    OutsideTree,
    create_exclusive,
    real_inside,
    replace_file,
    write_file,
)


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


# --- symbolic links and planted temporary files (review rows 27, 33, 34) ---------------------


def test_a_target_out_of_the_tree_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "m.json").write_bytes(b"old")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "direct.json").symlink_to(outside / "m.json")
    (tree / "folder").symlink_to(outside)
    for path in (tree / "direct.json", tree / "folder" / "m.json"):
        with pytest.raises(OutsideTree) as caught:
            replace_file(path, b"new", b"old", root=tree)
        assert caught.value.real == outside / "m.json" and caught.value.root == tree
    assert (outside / "m.json").read_bytes() == b"old"
    assert os.listdir(outside) == ["m.json"]


def test_a_link_inside_the_tree_is_kept_and_its_target_replaced(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"old")
    (tmp_path / "link.json").symlink_to("real.json")
    assert replace_file(tmp_path / "link.json", b"new", b"old", root=tmp_path) == tmp_path / "real.json"
    assert (tmp_path / "link.json").is_symlink() and (tmp_path / "real.json").read_bytes() == b"new"
    assert real_inside(tmp_path / "not-yet" / "x", tmp_path) == tmp_path / "not-yet" / "x"


def test_an_edit_saved_while_the_new_file_is_written_is_kept(tmp_path: Path, monkeypatch) -> None:
    # Review row 33: the content check used to come before the slow write and fsync.
    path = tmp_path / "m.json"
    path.write_bytes(b"old")
    real_fsync = os.fsync

    def editor_saves_meanwhile(fd: int) -> None:
        path.write_bytes(b"the user's edit")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", editor_saves_meanwhile)
    with pytest.raises(FileChanged):
        replace_file(path, b"new", b"old")
    assert path.read_bytes() == b"the user's edit"
    assert os.listdir(tmp_path) == ["m.json"]


def test_a_planted_temporary_name_is_never_opened(tmp_path: Path) -> None:
    # Review row 27: "--output r.json" wrote through a planted "r.json.tmp" symlink.
    victim = tmp_path / "victim"
    victim.write_bytes(b"KEEP")
    for name in ("r.json.tmp", ".r.json.tmp"):
        (tmp_path / name).symlink_to(victim)
    write_file(tmp_path / "r.json", b"report")
    assert victim.read_bytes() == b"KEEP"
    assert (tmp_path / "r.json").read_bytes() == b"report" and not (tmp_path / "r.json").is_symlink()
    assert sorted(os.listdir(tmp_path)) == [".r.json.tmp", "r.json", "r.json.tmp", "victim"]


def test_a_link_at_the_target_itself_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"KEEP")
    (tmp_path / "r.json").symlink_to(victim)
    write_file(tmp_path / "r.json", b"report")
    assert victim.read_bytes() == b"KEEP" and not (tmp_path / "r.json").is_symlink()


def test_exclusive_creation_uses_fresh_names_and_the_umask(tmp_path: Path) -> None:
    old_umask = os.umask(0o027)
    try:
        fd, path = create_exclusive(tmp_path, ".x.", ".tmp")
    finally:
        os.umask(old_umask)
    os.close(fd)
    assert path.parent == tmp_path and path.name.startswith(".x.") and path.name.endswith(".tmp")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    fd2, other = create_exclusive(tmp_path, ".x.", ".tmp")
    os.close(fd2)
    assert other != path
