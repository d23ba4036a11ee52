"""blockkit's pytest plugin: the local platform as fixtures.

Registered through the ``pytest11`` entry point and inert until a test asks for one of
its fixtures: importing this module imports nothing of the emulator.

- ``blockkit_emulator``: a :class:`blockkit.emulator.testing.LocalPlatform`, reset for
  this test to the seeded state (or to the state its marker names). Reset is an SQLite
  backup from an in-memory template, so every test starts from the same world.
- ``blockkit_emulator_session``: the session's emulators, one per (seed, scale, sfw)
  asked for, started on first use and stopped at the end; under pytest-xdist each worker
  process has its own, on its own free ports.

Choose the seed and scale for the run with ``--blockkit-seed`` / ``--blockkit-scale`` (or
the ini keys ``blockkit_seed`` / ``blockkit_scale``), and per test with the marker::

    @pytest.mark.blockkit_emulator(seed=2, scale="small", sfw_only=False, state="with-orders")

``state`` names a state saved earlier with ``platform.save_state(name)`` (for example by
a session fixture), or is a ``pathlib.Path`` to an export directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from blockkit.emulator.testing import LocalPlatform

MARKER = "blockkit_emulator"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("blockkit", "blockkit local platform")
    group.addoption("--blockkit-seed", type=int, default=None, metavar="N",
                    help="seed of the local platform's fixture data (default 1)")
    group.addoption("--blockkit-scale", choices=("small", "large"), default=None,
                    help="how much fixture data the local platform has (default small)")
    parser.addini("blockkit_seed", "seed of the local platform's fixture data", default="1")
    parser.addini("blockkit_scale", "small or large fixture data for the local platform", default="small")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(seed=None, scale=None, sfw_only=False, state=None): the local platform this test"
        " gets from the blockkit_emulator fixture (state: a name saved with save_state, or an export directory)")


class EmulatorPool:
    """The session's running emulators, keyed by (seed, scale, sfw_only)."""

    def __init__(self, seed: int, scale: str) -> None:
        self.seed = seed
        self.scale = scale
        self._running: dict[tuple[int, str, bool], tuple[Any, LocalPlatform]] = {}

    def get(self, seed: int | None = None, scale: str | None = None, sfw_only: bool = False) -> LocalPlatform:
        key = (self.seed if seed is None else seed, self.scale if scale is None else scale, sfw_only)
        if key not in self._running:
            try:
                from blockkit.emulator.testing import running
            except ImportError as exc:  # the core install has no server packages
                pytest.fail(f"the local platform needs blockkit's server extra: pip install 'blockkit[server]'"
                            f" ({exc.name} is missing)", pytrace=False)
            manager = running(seed=key[0], scale=key[1], sfw_only=key[2])
            platform = manager.__enter__()
            self._running[key] = (manager, platform)
        return self._running[key][1]

    def close(self) -> None:
        while self._running:
            _key, (manager, _platform) = self._running.popitem()
            manager.__exit__(None, None, None)


def _setting(config: pytest.Config, option: str, ini: str) -> str:
    value = config.getoption(option)
    return str(value) if value is not None else str(config.getini(ini))


@pytest.fixture(scope="session")
def blockkit_emulator_session(pytestconfig: pytest.Config) -> Any:
    """The session's emulators (see :class:`EmulatorPool`); ``.get()`` gives the default one."""
    seed_text = _setting(pytestconfig, "blockkit_seed", "blockkit_seed")
    try:
        seed = int(seed_text)
    except ValueError:
        raise pytest.UsageError(f"blockkit_seed = {seed_text!r}: must be an integer") from None
    scale = _setting(pytestconfig, "blockkit_scale", "blockkit_scale")
    if scale not in ("small", "large"):
        raise pytest.UsageError(f"blockkit_scale = {scale!r}: must be small or large")
    pool = EmulatorPool(seed, scale)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def blockkit_emulator(request: pytest.FixtureRequest, blockkit_emulator_session: EmulatorPool) -> LocalPlatform:
    """The local platform, reset for this test to the seeded state or to its marker's ``state``."""
    marker = request.node.get_closest_marker(MARKER)
    kwargs = dict(marker.kwargs) if marker is not None else {}
    unknown = set(kwargs) - {"seed", "scale", "sfw_only", "state"}
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: unknown arguments {', '.join(sorted(unknown))}")
    platform = blockkit_emulator_session.get(kwargs.get("seed"), kwargs.get("scale"), bool(kwargs.get("sfw_only")))
    state = kwargs.get("state")
    platform.reset(Path(state) if isinstance(state, Path) else state)
    return platform
