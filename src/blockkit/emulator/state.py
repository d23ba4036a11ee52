"""What every emulator app shares: the store, the clock, the options and the three origins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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


@dataclass(frozen=True)
class EmulatorState:
    store: Store
    clock: Clock
    options: EmulatorOptions
    urls: Urls


def emulator(request: Request) -> EmulatorState:
    """The running emulator's shared state, from inside a route."""
    return request.app.state.emulator  # type: ignore[no-any-return]
