"""Deterministic fixture data: the same seed number and scale give the same rows, byte for byte.

- ``ensure_seeded(store, seed, scale)``: seed an empty store; keep a seeded one as it is.
- ``landmarks(store)``: the named fixtures (ids and names of the moderator, a member, an
  archived model, an early-access version, ...) as a JSON-able dict, so tests and
  routes find them without hard-coding ids. The seed stores them in ``meta``.

The generator (``generate.py``) draws from one ``random.Random(seed)`` and dates
everything from a fixed anchor (``ANCHOR``), never from the wall clock.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from blockkit.emulator.store.clock import format_timestamp
from blockkit.emulator.options import SCALES
from blockkit.emulator.store import Store
from blockkit.emulator.store import meta

__all__ = ["SCALES", "ensure_seeded", "landmarks", "seed_store"]


def seed_store(store: Store, seed: int, scale: str) -> None:
    """Fill an empty store with the data of ``seed`` and ``scale`` (one transaction)."""
    from blockkit.emulator.seed.generate import generate

    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}")
    generate(store, seed, scale)


def _unseeded(db: Any) -> bool:
    return meta.get(db, meta.SEED) is None and db.execute("SELECT 1 FROM users LIMIT 1").fetchone() is None


def ensure_seeded(store: Store, seed: int, scale: str) -> list[str]:
    """Seed ``store`` unless it already holds data; return notes for the person starting it.

    Whether it is empty is asked again inside the seeding's write transaction: another writer
    (``blockkit emulator import`` into the same new directory) may have filled it since the first
    look, and then its data is kept and served, with a note, instead of a constraint error.
    """
    with store.read() as db:
        seeded = meta.get(db, meta.SEED)
        seeded_scale = meta.get(db, meta.SCALE)
    if seeded is None:
        from blockkit.emulator.seed import template

        if scale not in SCALES:
            raise ValueError(f"unknown scale {scale!r}")
        conn = store.connection()
        conn.execute("PRAGMA foreign_keys = OFF")  # as generate() does alone: checked as a whole by the tests
        try:
            with store.write() as db:
                filled_meanwhile = not _unseeded(db)
                if not filled_meanwhile:
                    seed_store(store, seed, scale)
        finally:
            conn.execute("PRAGMA foreign_keys = ON")
        if filled_meanwhile:
            return [f"{store.path.parent}: another process (an import?) filled this new data directory while"
                    " the emulator started; serving its data, not a fresh seed"]
        template.save(store, seed, scale)  # the next fresh start copies it (template.install)
        with store.write() as db:  # when this copy was made: local, so export leaves it out
            meta.put(db, meta.CREATED_AT, format_timestamp(datetime.now(timezone.utc)))
        return []
    if (seeded, seeded_scale) != (seed, scale):
        return [f"{store.path.parent} holds data seeded with --seed {seeded} --scale {seeded_scale}; keeping it"
                f" (asked for --seed {seed} --scale {scale}; 'blockkit emulator reset' re-seeds)"]
    return []


def landmarks(store: Store) -> dict[str, Any]:
    """The named fixtures of the seeded data (see generate.LANDMARK_KEYS)."""
    with store.read() as db:
        value = meta.get(db, meta.LANDMARKS, {})
    return dict(value)
