"""A fresh start copies a cached seeded database instead of generating it, and gets the same data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.runtime import Emulator
from blockkit.emulator.seed import template
from blockkit.emulator.transfer import export


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(template.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(template.SWITCH_VARIABLE, raising=False)
    return tmp_path / "cache" / "seed-templates"


def start_and_export(data: Path, out: Path) -> None:
    with Emulator(EmulatorOptions(data=data)) as emulator:
        assert emulator.store is not None
        export(emulator.store, out)


def no_generating(monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.emulator.seed import generate

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("generated instead of copying the template")

    monkeypatch.setattr(generate, "generate", refuse)


def exports_equal(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def test_first_start_keeps_a_template_and_the_next_copies_it(cache: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    start_and_export(tmp_path / "one", tmp_path / "export-one")
    kept = list(cache.glob("seed1-small-*.sqlite3"))
    assert len(kept) == 1
    assert kept[0].stat().st_mode & 0o777 == 0o600
    assert cache.stat().st_mode & 0o777 == 0o700
    no_generating(monkeypatch)
    start_and_export(tmp_path / "two", tmp_path / "export-two")
    assert exports_equal(tmp_path / "export-one", tmp_path / "export-two")
    assert (tmp_path / "two" / "emulator.sqlite3").stat().st_mode & 0o777 == 0o600


def test_a_template_of_other_code_is_not_used(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start_and_export(tmp_path / "one", tmp_path / "e1")
    monkeypatch.setattr(template, "fingerprint", lambda: "another-generator")
    calls: list[int] = []
    from blockkit.emulator.seed import generate

    real = generate.generate
    monkeypatch.setattr(generate, "generate", lambda *a, **k: calls.append(1) or real(*a, **k))
    start_and_export(tmp_path / "two", tmp_path / "e2")
    assert calls == [1]
    assert len(list(cache.glob("*another-generator*"))) == 1


def test_a_damaged_template_falls_back_to_generating(cache: Path, tmp_path: Path) -> None:
    start_and_export(tmp_path / "one", tmp_path / "e1")
    kept = next(cache.glob("seed1-small-*.sqlite3"))
    kept.write_bytes(b"not a database at all" * 100)
    start_and_export(tmp_path / "two", tmp_path / "e2")
    assert exports_equal(tmp_path / "e1", tmp_path / "e2")


def test_a_cache_others_may_write_is_neither_used_nor_written(cache: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    start_and_export(tmp_path / "one", tmp_path / "e1")
    os.chmod(cache, 0o777)
    no_generating(monkeypatch)
    with pytest.raises(AssertionError, match="generated instead"):
        start_and_export(tmp_path / "two", tmp_path / "e2")


def test_the_cache_can_be_turned_off(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(template.SWITCH_VARIABLE, "0")
    start_and_export(tmp_path / "one", tmp_path / "e1")
    assert not cache.exists() or not list(cache.iterdir())


def test_an_existing_data_directory_is_never_replaced(cache: Path, tmp_path: Path) -> None:
    start_and_export(tmp_path / "one", tmp_path / "e1")
    assert template.install(tmp_path / "one", 1, "small") is False
