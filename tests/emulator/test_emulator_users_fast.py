"""``blockkit emulator users`` without ``--data`` seeds only the users (issue 21: ``--scale large``
took 9 s, seeding 10,000 models and 100,000 images to list a few hundred people)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from blockkit.emulator.seed import seed_store
from blockkit.emulator.seed.generate import generate_users
from blockkit.emulator.store import DB_FILENAME, Store


def _rows(data: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(data / DB_FILENAME) as conn:
        return conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()


def _tables_with_rows(data: Path) -> set[str]:
    with sqlite3.connect(data / DB_FILENAME) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n for n in names if conn.execute(f"SELECT count(*) FROM {n}").fetchone()[0]}


def test_the_users_alone_are_the_users_of_the_full_seed(tmp_path: Path) -> None:
    full, users_only = tmp_path / "full", tmp_path / "users"
    for path, fill in ((full, seed_store), (users_only, generate_users)):
        path.mkdir()
        with Store.open(path, check=False) as store:
            fill(store, 3, "small")
    made = _tables_with_rows(users_only)
    assert "users" in made
    # Users and what hangs on them only: no catalogue (what made --scale large slow).
    assert "models" not in made and "images" not in made
    for table in made:
        if table in _tables_with_rows(full) and table not in ("schema_migrations", "meta"):
            assert _rows(users_only, table) == _rows(full, table), table


def test_users_without_data_makes_no_catalogue_even_at_scale_large(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Before, `users --scale large` seeded 10,000 models and 100,000 images (9 s) to list users.
    import json

    from click.testing import CliRunner

    from blockkit.cli import main
    from blockkit.emulator.seed import generate

    def no_catalogue(self: object) -> None:
        raise AssertionError("the catalogue was seeded to list the users")

    monkeypatch.setattr(generate.Generator, "make_models", no_catalogue)
    monkeypatch.setattr(generate.Generator, "make_posts", no_catalogue)
    result = CliRunner().invoke(main, ["emulator", "users", "--scale", "large", "--format", "json"])
    assert result.exit_code == 0, result.output
    users = json.loads(result.output)["users"]
    assert len(users) > 100 and users[0]["id"] == -1
