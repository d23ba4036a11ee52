"""The seed generator (skeleton: platform tables and the system user; the full data comes next)."""

from __future__ import annotations

from datetime import datetime, timezone

from blockkit.emulator import facts
from blockkit.emulator.clock import format_timestamp
from blockkit.emulator.store import Store, meta

ANCHOR = datetime(2026, 1, 1, tzinfo=timezone.utc)


def generate(store: Store, seed: int, scale: str) -> None:
    with store.write() as db:
        db.executemany("INSERT INTO base_models (name, position, ecosystem, kind, active) VALUES (?, ?, ?, ?, ?)",
                       [(b.name, i, b.ecosystem, b.kind, int(b.active)) for i, b in enumerate(facts.BASE_MODELS)])
        db.execute("INSERT INTO users (id, username, tier, status, is_moderator, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (facts.SYSTEM_USER_ID, facts.SYSTEM_USERNAME, "free", "active", 1,
                    format_timestamp(datetime(2022, 11, 1, tzinfo=timezone.utc))))
        meta.put(db, meta.SEED, seed)
        meta.put(db, meta.SCALE, scale)
        meta.put(db, meta.CLOCK_OFFSET, 0.0)
        meta.put(db, meta.LANDMARKS, {"system_user": {"id": facts.SYSTEM_USER_ID, "username": facts.SYSTEM_USERNAME}})
