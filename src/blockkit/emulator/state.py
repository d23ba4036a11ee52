"""What every emulator app shares: the store, the clock, the options and the three origins."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from starlette.requests import Request

    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.store import Store


@dataclass(frozen=True)
class Urls:
    """The three origins, as the ready file and the start-up lines give them."""

    base_url: str           # catalogue: {base_url}/api/v1
    auth_url: str           # OAuth provider
    orchestration_url: str  # orchestration service

    def as_dict(self) -> dict[str, str]:
        return {"base_url": self.base_url, "auth_url": self.auth_url, "orchestration_url": self.orchestration_url}


T = TypeVar("T")


@dataclass(frozen=True)
class EmulatorState:
    """One build of the apps (``http/server.py`` ``build_apps``). A reset builds them again, with a new one.

    In-memory state that is not in the store (a cache of answers, the short-lived download grants)
    lives in :meth:`kept`, never in a module-level dict: a reset then starts it afresh, as it does the
    rows (``tests/emulator/test_testing_plugin.py`` walks the modules for caches kept anywhere else).
    """

    store: Store
    clock: Clock
    options: EmulatorOptions
    urls: Urls
    _kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _kept_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def kept(self, name: str, make: Callable[[], T]) -> T:
        """This build's object called ``name``, made by ``make()`` on first use."""
        with self._kept_lock:
            found = self._kept.get(name)
            if found is None:
                found = self._kept[name] = make()
            return found  # type: ignore[no-any-return]


def emulator(request: Request) -> EmulatorState:
    """The running emulator's shared state, from inside a route."""
    return request.app.state.emulator  # type: ignore[no-any-return]
