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


class NoteOnce:
    """Tell the person running the emulator a line once: a second call with the same text is silent.

    For what is worth saying only when it happens (a video asked for without the ``video`` extra),
    not at every start."""

    def __init__(self, say: Callable[[str], None] | None = None) -> None:
        self._say = say
        self._told: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            if text in self._told:
                return
            self._told.add(text)
        if self._say is not None:
            self._say(text)


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
    # The emulator's notes to whoever runs it (stderr of `emulator start`, `exec`, `dev`), each once.
    note_once: NoteOnce = field(default_factory=NoteOnce, compare=False)
    # The building's whole-store operations (``blockkit.emulator.transfer``: export, import_export,
    # reset), handed down by ``runtime.Emulator`` for the web console; None in apps built bare.
    data_ops: Any = field(default=None, compare=False, repr=False)
    # The run's request journal (journal.py), kept across resets; None: apps built without a server.
    journal: Any = field(default=None, compare=False)


def emulator(request: Request) -> EmulatorState:
    """The running emulator's shared state, from inside a route."""
    return request.app.state.emulator  # type: ignore[no-any-return]
