"""Queries for /enums: the catalogued base models (the seed copies facts.BASE_MODELS here)."""

from __future__ import annotations

import sqlite3


def base_model_names(db: sqlite3.Connection, *, active_only: bool = False) -> list[str]:
    sql = "SELECT name FROM base_models"
    if active_only:
        sql += " WHERE active = 1"
    return [row[0] for row in db.execute(sql + " ORDER BY position")]
