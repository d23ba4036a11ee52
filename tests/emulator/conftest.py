"""Fixtures for the emulator: a real ``blockkit emulator start`` subprocess, an in-process one, stores.

- ``emulator`` (session): one subprocess started as a user would (``python -m blockkit
  emulator start --port 0 --ready-file ...``); yields the ready-file dict (base_url,
  auth_url, orchestration_url, pid, data). Tests must not change its data.
- ``start_emulator`` (function): a factory for tests that need their own process
  (signals, --data, --sfw-only); every process it starts is stopped at the end.
- ``live_emulator`` (function): an in-process :class:`Emulator` on a fresh temporary
  data directory, for tests that reach into the store while it serves.
- ``seeded_store`` (session): the small seed in a store, read-only by convention.

HTTP and subprocess helpers are in ``emulator_helpers.py`` (``get_json``, ``post_json``,
``blockkit``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
from emulator_helpers import Started, start_process


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    started = start_process(tmp_path_factory.mktemp("emulator") / "ready.json")
    try:
        yield started.info
    finally:
        started.stop()


@pytest.fixture
def start_emulator(tmp_path: Path) -> Iterator[Callable[..., Started]]:
    running: list[Started] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Started:
        started = start_process(tmp_path / f"ready-{len(running)}.json", *args, env=env)
        running.append(started)
        return started

    yield start
    for started in running:
        if started.process.poll() is None:
            started.stop()


@pytest.fixture
def live_emulator(tmp_path: Path) -> Iterator[Any]:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions(data=tmp_path / "data")) as emu:
        yield emu


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from blockkit.emulator.seed import ensure_seeded
    from blockkit.emulator.store import Store

    store = Store.open(tmp_path_factory.mktemp("seeded"))
    ensure_seeded(store, 1, "small")
    try:
        yield store
    finally:
        store.close()
