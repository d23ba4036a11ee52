"""Queries for the vault: one vault per member (keyed by user id) and its item snapshots."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

ITEM_COLUMNS = ("id, vault_id, status, model_version_id, model_id, model_name, version_name, creator_id,"
                " creator_name, type, base_model, category, model_size_kb, details_size_kb, images_size_kb,"
                " created_at, added_at, refreshed_at, notes, meta, cover_image_url")


def active_tiers(db: sqlite3.Connection, user_id: int) -> list[str]:
    """The tiers of the user's active subscriptions (their memberships)."""
    return [r[0] for r in db.execute(
        "SELECT tier FROM subscriptions WHERE user_id = ? AND status = 'active' ORDER BY id", (user_id,))]


def get_vault(db: sqlite3.Connection, user_id: int) -> tuple[Any, ...] | None:
    """(user_id, storage_kb, meta, updated_at, used_kb) or None."""
    row = db.execute(
        "SELECT v.user_id, v.storage_kb, v.meta, v.updated_at,"
        " (SELECT coalesce(sum(model_size_kb + details_size_kb + images_size_kb), 0) FROM vault_items i"
        "  WHERE i.vault_id = v.user_id)"
        " FROM vaults v WHERE v.user_id = ?", (user_id,)).fetchone()
    return None if row is None else tuple(row)


def create_vault(db: sqlite3.Connection, user_id: int, storage_kb: int, now: str) -> None:
    db.execute("INSERT INTO vaults (user_id, storage_kb, meta, created_at, updated_at) VALUES (?, ?, '{}', ?, ?)"
               " ON CONFLICT (user_id) DO NOTHING", (user_id, storage_kb, now, now))


def set_storage(db: sqlite3.Connection, user_id: int, storage_kb: int, now: str) -> None:
    db.execute("UPDATE vaults SET storage_kb = ?, updated_at = ? WHERE user_id = ?", (storage_kb, now, user_id))


def touch(db: sqlite3.Connection, user_id: int, now: str) -> None:
    db.execute("UPDATE vaults SET updated_at = ? WHERE user_id = ?", (now, user_id))


def items(db: sqlite3.Connection, vault_id: int) -> list[tuple[Any, ...]]:
    """Every item of a vault (ITEM_COLUMNS), newest first."""
    return [tuple(r) for r in db.execute(
        f"SELECT {ITEM_COLUMNS} FROM vault_items WHERE vault_id = ? ORDER BY added_at DESC, id DESC", (vault_id,))]


def items_for_versions(db: sqlite3.Connection, vault_id: int, version_ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    if not version_ids:
        return {}
    marks = ",".join("?" * len(version_ids))
    return {r[3]: tuple(r) for r in db.execute(
        f"SELECT {ITEM_COLUMNS} FROM vault_items WHERE vault_id = ? AND model_version_id IN ({marks})",
        [vault_id, *version_ids])}


def item_files(db: sqlite3.Connection, item_ids: Sequence[int]) -> dict[int, list[tuple[Any, ...]]]:
    """item id -> [(file id, size_kb, url, display_name)]."""
    out: dict[int, list[tuple[Any, ...]]] = {}
    if not item_ids:
        return out
    marks = ",".join("?" * len(item_ids))
    for r in db.execute(f"SELECT vault_item_id, id, size_kb, url, display_name FROM vault_item_files"
                        f" WHERE vault_item_id IN ({marks}) ORDER BY vault_item_id, id", list(item_ids)):
        out.setdefault(r[0], []).append(tuple(r[1:]))
    return out


def add_item(db: sqlite3.Connection, **values: Any) -> int:
    columns = ", ".join(values)
    cursor = db.execute(f"INSERT INTO vault_items ({columns}) VALUES ({','.join('?' * len(values))})",
                        list(values.values()))
    return int(cursor.lastrowid or 0)


def remove_item(db: sqlite3.Connection, item_id: int) -> None:
    db.execute("DELETE FROM vault_item_files WHERE vault_item_id = ?", (item_id,))
    db.execute("DELETE FROM vault_items WHERE id = ?", (item_id,))
